//! The platform's one list answer (ARCHITECTURE.md, "Conventions"): `page` from 1 and `limit`
//! from 1 to 100 in the query, `{data, pagination: {page, limit, total}}` in the answer; and
//! `{data}` for the short lists that are not paged.

use axum::Json;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use domain::pagination::Pagination;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `page` and `limit`, the one query type every list reads them with: a list with filters takes
/// its own query type beside this one (`ApiQuery<PageQuery>` and `ApiQuery<ItsQuery>`, both in
/// its `params(...)`), never its own `page`/`limit` fields.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page number from 1 (default 1).
    pub page: Option<String>,
    /// Page size from 1 to 100 (default 20).
    pub limit: Option<String>,
}

impl PageQuery {
    /// The page asked for; a bad `page` or `limit` is recorded in `problems` beside the other
    /// parameters' problems.
    pub fn read(&self, problems: &mut domain::Problems) -> domain::pagination::PageRequest {
        domain::pagination::PageRequest::from_query(
            problems,
            self.page.as_deref(),
            self.limit.as_deref(),
        )
    }

    /// The page asked for, when the list reads nothing else.
    pub fn parse(&self) -> Result<domain::pagination::PageRequest, crate::error::AppError> {
        let mut problems = domain::Problems::new();
        let page = self.read(&mut problems);
        problems.finish()?;
        Ok(page)
    }
}

/// A page of records.
#[derive(Serialize, ToSchema)]
pub struct Page<T> {
    data: Vec<T>,
    pagination: Pagination,
}

impl<T> Page<T> {
    pub fn new(data: Vec<T>, page: domain::pagination::PageRequest, total: i64) -> Json<Page<T>> {
        Json(Page {
            data,
            pagination: Pagination {
                page: page.page,
                limit: page.limit,
                total,
            },
        })
    }
}

/// A page whose records Postgres already rendered as JSON ([`domain::pagination::JsonPage`]):
/// the answer is written around that array, byte for byte the shape of [`Page`]. The route's
/// OpenAPI annotation names the `Page<T>` it is.
pub struct JsonPageAnswer(String);

impl JsonPageAnswer {
    pub fn new(
        page: domain::pagination::JsonPage,
        request: domain::pagination::PageRequest,
    ) -> Self {
        let pagination = Pagination {
            page: request.page,
            limit: request.limit,
            total: page.total,
        };
        // Serializing three integers cannot fail.
        let pagination = serde_json::to_string(&pagination).unwrap_or_default();
        // The list's summary members (an object Postgres wrote) go beside data and pagination.
        let summary = page
            .summary
            .as_deref()
            .and_then(|s| s.trim().strip_prefix('{')?.strip_suffix('}'))
            .map(str::trim)
            .filter(|members| !members.is_empty())
            .map(|members| format!(",{members}"))
            .unwrap_or_default();
        Self(format!(
            r#"{{"data":{},"pagination":{pagination}{summary}}}"#,
            page.data
        ))
    }
}

impl IntoResponse for JsonPageAnswer {
    fn into_response(self) -> Response {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            self.0,
        )
            .into_response()
    }
}

/// A list that is not paged (a villa's team, its OTA credentials: a handful each).
#[derive(Serialize, ToSchema)]
pub struct Items<T> {
    pub data: Vec<T>,
}
