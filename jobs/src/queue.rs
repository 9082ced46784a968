/// The queues, one per family of work. Each family has its own worker binary
/// (`workers/src/bin/worker-<family>.rs`) so operators scale them independently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Platform housekeeping and the pipeline's diagnostic job.
    System,
    /// Document-store folders and uploads.
    Documents,
    /// Image work (thumbnails): CPU-bound, so scaled apart from the I/O-bound uploads.
    Media,
    /// Planned-maintenance generation.
    Maintenance,
    /// Stock alert evaluation.
    Alerts,
}

impl Queue {
    pub const ALL: [Queue; 5] = [
        Queue::System,
        Queue::Documents,
        Queue::Media,
        Queue::Maintenance,
        Queue::Alerts,
    ];

    /// The row's `queue` column and, behind the Redis prefix, the apalis queue name.
    pub fn name(self) -> &'static str {
        match self {
            Queue::System => "system",
            Queue::Documents => "documents",
            Queue::Media => "media",
            Queue::Maintenance => "maintenance",
            Queue::Alerts => "alerts",
        }
    }

    pub fn parse(name: &str) -> Option<Queue> {
        Self::ALL.into_iter().find(|q| q.name() == name)
    }
}
