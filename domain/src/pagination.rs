use serde::Serialize;

use crate::Problems;

pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;

/// A validated page request: `page` from 1, `limit` from 1 to [`MAX_LIMIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRequest {
    pub page: u32,
    pub limit: u32,
}

impl PageRequest {
    /// Reads the raw query values; each bad one is recorded in `problems` (and replaced by its
    /// default, so the caller goes on collecting the other fields' problems).
    pub fn from_query(problems: &mut Problems, page: Option<&str>, limit: Option<&str>) -> Self {
        let page = match page.map(|raw| raw.trim().parse::<u32>()) {
            None => 1,
            Some(Ok(p)) if p >= 1 => p,
            Some(_) => {
                problems.push("page", "out_of_range", "page must be a whole number from 1");
                1
            }
        };
        let limit = match limit.map(|raw| raw.trim().parse::<u32>()) {
            None => DEFAULT_LIMIT,
            Some(Ok(l)) if (1..=MAX_LIMIT).contains(&l) => l,
            Some(_) => {
                problems.push(
                    "limit",
                    "out_of_range",
                    format!("limit must be a whole number from 1 to {MAX_LIMIT}"),
                );
                DEFAULT_LIMIT
            }
        };
        Self { page, limit }
    }

    pub fn offset(&self) -> i64 {
        i64::from(self.page - 1) * i64::from(self.limit)
    }
}

#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct Pagination {
    pub page: u32,
    pub limit: u32,
    pub total: i64,
}

/// A page whose records Postgres rendered as one JSON array (`data`, the text of a `jsonb_agg`),
/// with the total matching the filter. Hot lists answer with this: the array goes to the client
/// as Postgres wrote it, not parsed into values and written out again.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JsonPage {
    pub data: String,
    pub total: i64,
}
