/// Declares the queues from one list: the [`Queue`] enum, [`Queue::ALL`], [`Queue::name`] and
/// [`Queue::parse`] all follow from it, so a new family is one line in the list below (then its
/// job module, its `worker-<family>` binary and its `Procfile` and `docker-compose.yml` lines;
/// `tests/tests/processes.rs` checks that those exist).
macro_rules! queues {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)+) => {
        /// The queues, one per family of work. Each family has its own worker binary
        /// (`workers/src/bin/worker-<family>.rs`) so operators scale them independently.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Queue {
            $($(#[$doc])* $variant,)+
        }

        /// How many queues the list declares (the length of [`Queue::ALL`]).
        const QUEUE_COUNT: usize = [$($name),+].len();

        impl Queue {
            /// Every queue, in the order of the list.
            pub const ALL: [Queue; QUEUE_COUNT] = [$(Queue::$variant),+];

            /// The row's `queue` column, the family of its `worker-<family>` binary and, behind
            /// the Redis prefix, the apalis queue name. Never rename one that has landed.
            pub fn name(self) -> &'static str {
                match self {
                    $(Queue::$variant => $name,)+
                }
            }
        }
    };
}

queues! {
    /// Platform housekeeping and the pipeline's diagnostic job.
    System => "system",
    /// Document-store folders and uploads.
    Documents => "documents",
    /// Image work (thumbnails): CPU-bound, so scaled apart from the I/O-bound uploads.
    Media => "media",
    /// Planned-maintenance generation.
    Maintenance => "maintenance",
    /// Stock alert evaluation.
    Alerts => "alerts",
    /// PMS synchronisation.
    Pms => "pms",
    /// Spreadsheet exports of the reporting data.
    Exports => "exports",
    /// E-mail to people outside the platform (owners' approval requests).
    Mail => "mail",
}

impl Queue {
    pub fn parse(name: &str) -> Option<Queue> {
        Self::ALL.into_iter().find(|q| q.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_has_its_own_name_and_parses_back() {
        for queue in Queue::ALL {
            assert_eq!(Queue::parse(queue.name()), Some(queue));
            let same_name = Queue::ALL
                .iter()
                .filter(|q| q.name() == queue.name())
                .count();
            assert_eq!(same_name, 1, "{} names two queues", queue.name());
        }
        assert_eq!(Queue::parse("nothing"), None);
    }
}
