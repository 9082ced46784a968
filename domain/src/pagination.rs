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
    /// Figures over every record matching (not only the page) that a list answers beside its
    /// page, as a JSON object (`{"totalHours": 12.5}`); `None` for most lists.
    pub summary: Option<String>,
}

/// What one list reads, for [`json_page`]: static SQL fragments (never client text).
#[derive(Debug, Clone, Copy)]
pub struct ListSql {
    /// `FROM` (and the joins the conditions need) for the count.
    pub count_from: &'static str,
    /// The JSON of one record.
    pub item: &'static str,
    /// `FROM` and the joins the record's JSON needs.
    pub from: &'static str,
    /// The list's order, ending with a unique key (`w.created_at DESC, w.id DESC`).
    pub order: &'static str,
}

/// The page `page` of a list and the total matching its conditions, in one statement: one round
/// trip, the page rendered by Postgres as the answer's JSON array. `conditions` writes the
/// `WHERE` clause of the filters given, each value bound (`push_bind`): only what is present is
/// written, so each combination of filters is its own prepared statement with one generic plan
/// (optional filters written `($1 IS NULL OR col = $1)` would make Postgres plan every request
/// again). The first page has no OFFSET: Postgres costs an unknown offset as a tenth of the rows
/// skipped, which would also keep it from a generic plan. `conditions` is written twice (page and
/// count); the first value it binds is `$1` of the statement, which the item's JSON may read (the
/// asset list's today).
pub async fn json_page(
    conn: &mut sqlx::PgConnection,
    list: &ListSql,
    page: PageRequest,
    conditions: impl Fn(&mut sqlx::QueryBuilder<sqlx::Postgres>),
) -> crate::Result<JsonPage> {
    json_page_with_summary(conn, list, "NULL", page, conditions).await
}

/// [`json_page`] with `summary`, a JSON object expression aggregated over every matching record
/// (`jsonb_build_object('totalHours', coalesce(sum(t.hours), 0))`), computed in the same pass as
/// the total.
pub async fn json_page_with_summary(
    conn: &mut sqlx::PgConnection,
    list: &ListSql,
    summary: &'static str,
    page: PageRequest,
    conditions: impl Fn(&mut sqlx::QueryBuilder<sqlx::Postgres>),
) -> crate::Result<JsonPage> {
    let mut sql = sqlx::QueryBuilder::new("SELECT c.total, c.summary, ");
    sql.push("coalesce((SELECT jsonb_agg(p.item ORDER BY p.n) FROM (SELECT ")
        .push(list.item)
        .push(" AS item, row_number() OVER (ORDER BY ")
        .push(list.order)
        .push(") AS n ")
        .push(list.from);
    conditions(&mut sql);
    sql.push(" ORDER BY ")
        .push(list.order)
        .push(" LIMIT ")
        .push_bind(i64::from(page.limit));
    if page.offset() > 0 {
        sql.push(" OFFSET ").push_bind(page.offset());
    }
    sql.push(") p), '[]')::text AS data FROM (SELECT count(*) AS total, ")
        .push(summary)
        .push("::text AS summary ")
        .push(list.count_from);
    conditions(&mut sql);
    sql.push(") c");
    Ok(sql.build_query_as().fetch_one(&mut *conn).await?)
}
