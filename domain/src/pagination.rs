use serde::Serialize;

use crate::{Error, FieldError};

pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;

/// A validated page request: `page` from 1, `limit` from 1 to [`MAX_LIMIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u32,
    pub limit: u32,
}

impl PageRequest {
    /// Parses the raw query values; every bad one is reported.
    pub fn parse(page: Option<&str>, limit: Option<&str>) -> Result<Self, Error> {
        let mut errors = Vec::new();
        let page = match page {
            None => 1,
            Some(raw) => match raw.trim().parse::<u32>() {
                Ok(p) if p >= 1 => p,
                _ => {
                    errors.push(FieldError::new(
                        "page",
                        "out_of_range",
                        "page must be a whole number from 1",
                    ));
                    1
                }
            },
        };
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(raw) => match raw.trim().parse::<u32>() {
                Ok(l) if (1..=MAX_LIMIT).contains(&l) => l,
                _ => {
                    errors.push(FieldError::new(
                        "limit",
                        "out_of_range",
                        format!("limit must be a whole number from 1 to {MAX_LIMIT}"),
                    ));
                    DEFAULT_LIMIT
                }
            },
        };
        if errors.is_empty() {
            Ok(Self { page, limit })
        } else {
            Err(Error::Validation(errors))
        }
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
