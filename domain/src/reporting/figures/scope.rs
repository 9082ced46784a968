//! The listings figures are about: the `listingIds` parameter, and the scope it resolves to.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::MAX_LISTING_IDS;
use crate::{Error, Problems, Result};

/// `listingIds` of a query, comma-separated (`a,b,c`); absent or empty: none (every ACTIVE
/// listing). A malformed id, an empty member or more than [`MAX_LISTING_IDS`] is a problem on
/// `field`. The same id twice counts once; the order is kept.
pub fn parse_listing_ids(problems: &mut Problems, field: &str, raw: Option<&str>) -> Vec<Uuid> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    listing_ids_of(problems, field, raw.split(','))
}

/// The listing ids of a list of members (a query's comma-separated ones, a body's array of
/// strings), with the problems of [`parse_listing_ids`].
pub fn listing_ids_of<'a>(
    problems: &mut Problems,
    field: &str,
    members: impl IntoIterator<Item = &'a str>,
) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = Vec::new();
    // Duplicates found by hashing: scanning `ids` for each member is quadratic in the input.
    let mut seen: HashSet<Uuid> = HashSet::new();
    let mut malformed: Vec<String> = Vec::new();
    let mut empty = false;
    for member in members {
        let member = member.trim();
        if member.is_empty() {
            empty = true;
            continue;
        }
        match member.parse::<Uuid>() {
            Ok(id) if seen.insert(id) => ids.push(id),
            Ok(_) => {}
            // Quoted and cut short: the message names the first few without echoing the input.
            Err(_) if malformed.len() < 5 => {
                malformed.push(format!("{:?}", member.chars().take(40).collect::<String>()))
            }
            Err(_) => {}
        }
    }
    if empty {
        problems.push(
            field,
            "invalid_format",
            format!(
                "{field} must be listing ids (UUIDs) separated by commas, with no empty member"
            ),
        );
    }
    if !malformed.is_empty() {
        let shown: Vec<&str> = malformed.iter().map(String::as_str).collect();
        problems.push(
            field,
            "invalid_format",
            format!(
                "{field} must hold listing ids (UUIDs): {} is not one",
                shown.join(", ")
            ),
        );
    }
    if ids.len() > MAX_LISTING_IDS {
        problems.push(
            field,
            "out_of_range",
            format!(
                "{field} may name at most {MAX_LISTING_IDS} listings, not {}",
                ids.len()
            ),
        );
    }
    ids
}

/// The listings figures are about.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Empty: every ACTIVE listing; else exactly these (any status).
    pub listing_ids: Vec<Uuid>,
}

impl Scope {
    /// The scope of `listing_ids` (duplicates dropped), once each is known to be a listing: an
    /// unknown one is a validation error on `listingIds` naming it.
    pub async fn resolve(conn: &mut PgConnection, listing_ids: Vec<Uuid>) -> Result<Scope> {
        let mut ids = listing_ids;
        let mut seen: HashSet<Uuid> = HashSet::with_capacity(ids.len());
        ids.retain(|id| seen.insert(*id));
        if ids.is_empty() {
            return Ok(Scope::default());
        }
        if ids.len() > MAX_LISTING_IDS {
            return Err(Error::invalid(
                "listingIds",
                "out_of_range",
                format!("listingIds may name at most {MAX_LISTING_IDS} listings"),
            ));
        }
        let unknown: Vec<Uuid> = sqlx::query_scalar(
            "SELECT t.id FROM unnest($1::uuid[]) WITH ORDINALITY AS t (id, n)
             WHERE NOT EXISTS (SELECT 1 FROM pms_listings l WHERE l.id = t.id)
             ORDER BY t.n",
        )
        .bind(&ids)
        .fetch_all(&mut *conn)
        .await?;
        if !unknown.is_empty() {
            let named: Vec<String> = unknown.iter().map(Uuid::to_string).collect();
            return Err(Error::invalid(
                "listingIds",
                "invalid_value",
                format!("no listing has the id {}", named.join(", ")),
            ));
        }
        Ok(Scope { listing_ids: ids })
    }

    /// The names of the listings the scope names, by name (none: every ACTIVE listing, which
    /// the caller says in words), for an export's Definitions sheet.
    pub async fn names(&self, conn: &mut PgConnection) -> Result<Vec<String>> {
        if self.listing_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_scalar(
            "SELECT name FROM pms_listings WHERE id = ANY($1) ORDER BY lower(name), id",
        )
        .bind(self.listing_ids.as_slice())
        .fetch_all(conn)
        .await?)
    }

    /// `null` for every ACTIVE listing, else the ids.
    pub fn json(&self) -> Value {
        if self.listing_ids.is_empty() {
            Value::Null
        } else {
            json!(self.listing_ids)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::fields;
    use super::*;

    #[test]
    fn listing_ids_are_comma_separated_uuids() {
        let a = Uuid::now_v7();
        let b = Uuid::now_v7();
        let mut problems = Problems::new();
        assert_eq!(
            parse_listing_ids(&mut problems, "listingIds", None),
            Vec::<Uuid>::new()
        );
        assert_eq!(
            parse_listing_ids(&mut problems, "listingIds", Some(" ")),
            Vec::<Uuid>::new()
        );
        assert_eq!(
            parse_listing_ids(
                &mut problems,
                "listingIds",
                Some(format!("{a}, {b},{a}").as_str())
            ),
            vec![a, b]
        );
        assert!(problems.is_empty());
        let mut problems = Problems::new();
        parse_listing_ids(
            &mut problems,
            "listingIds",
            Some(format!("{a},,{b}").as_str()),
        );
        assert_eq!(
            fields(problems),
            vec![("listingIds".to_owned(), "invalid_format")]
        );
        let mut problems = Problems::new();
        parse_listing_ids(
            &mut problems,
            "listingIds",
            Some(format!("{a},villa-7").as_str()),
        );
        let Err(Error::Validation(errors)) = problems.finish() else {
            panic!("a validation error expected")
        };
        assert!(
            errors[0].message.contains("\"villa-7\""),
            "{}",
            errors[0].message
        );
        let many: Vec<String> = (0..=MAX_LISTING_IDS)
            .map(|_| Uuid::now_v7().to_string())
            .collect();
        let mut problems = Problems::new();
        parse_listing_ids(&mut problems, "listingIds", Some(&many.join(",")));
        assert_eq!(
            fields(problems),
            vec![("listingIds".to_owned(), "out_of_range")]
        );
        let mut problems = Problems::new();
        assert_eq!(
            listing_ids_of(&mut problems, "listingIds", [a.to_string().as_str()]),
            vec![a]
        );
    }
}
