//! The lines of an export's Definitions sheet: what it is, its period and filters, the formulas.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ExportSpec, ExportType};
use crate::reporting::figures::{self, Period};

/// Longest text of listing names the Definitions sheet shows (an Excel cell holds 32,767
/// characters); the data rows name every listing anyway.
const MAX_NAMES_TEXT: usize = 4_000;

fn name_list(names: &[String]) -> String {
    let mut text = String::new();
    for (shown, name) in names.iter().enumerate() {
        if text.len() + name.len() > MAX_NAMES_TEXT {
            text.push_str(&format!(" … and {} more", names.len() - shown));
            break;
        }
        if shown > 0 {
            text.push_str(", ");
        }
        text.push_str(name);
    }
    text
}

/// The label and value lines the Definitions sheet shows before its table of columns: what the
/// export is, its period and filters, when it was made, and the formulas
/// ([`figures::DEFINITIONS`]). `scope_names` are the names of the listings in scope, those of
/// the listing filter or every ACTIVE listing's (empty: the lines say which listings without
/// naming them).
pub fn definitions(
    spec: &ExportSpec,
    scope_names: &[String],
    generated_at: DateTime<Utc>,
) -> Vec<(String, String)> {
    let is_reservations = spec.kind == ExportType::Reservations;
    let period = match (is_reservations, spec.start_date, spec.end_date) {
        (true, Some(start), Some(end)) => format!("Check-in from {start} to {end}, both inclusive"),
        (true, Some(start), None) => format!("Check-in on or after {start}"),
        (true, None, Some(end)) => format!("Check-in on or before {end}"),
        (true, None, None) => "Every check-in date".to_owned(),
        (false, Some(start), Some(end)) => format!(
            "{start} to {end}: {} nights, both dates inclusive (a night is dated by its evening)",
            Period { start, end }.nights()
        ),
        (false, _, _) => "Not set".to_owned(),
    };
    let code = spec.currency.as_str();
    let currency = match spec.kind {
        ExportType::Reservations => {
            "Each reservation's own (the Currency column); amounts are never converted".to_owned()
        }
        ExportType::Occupancy => "None: occupancy has no money figures".to_owned(),
        ExportType::OwnerStatement => {
            "Each line's own (the Currency column); totals per currency, never converted".to_owned()
        }
        ExportType::Listings | ExportType::Revenue => format!(
            "{code}: money figures count only the stays in {code}; stays in other currencies \
             are left out, never converted"
        ),
    };
    let everyone = if is_reservations {
        "Every listing (no listing filter)"
    } else {
        "Every ACTIVE listing"
    };
    let listings = if !spec.listing_ids.is_empty() {
        // The names when the caller has them, else the ids.
        let ids: Vec<String> = spec.listing_ids.iter().map(Uuid::to_string).collect();
        let named = if scope_names.is_empty() {
            &ids[..]
        } else {
            scope_names
        };
        format!(
            "{} named by the listing filter: {}",
            named.len(),
            name_list(named)
        )
    } else if scope_names.is_empty() {
        everyone.to_owned()
    } else {
        format!(
            "{everyone} ({}): {}",
            scope_names.len(),
            name_list(scope_names)
        )
    };
    let mut lines = vec![
        (
            "Export".to_owned(),
            format!(
                "{} ({}). {}",
                spec.kind.title(),
                spec.format.as_str(),
                spec.kind.rows_description()
            ),
        ),
        ("Period".to_owned(), period),
        ("Currency".to_owned(), currency),
    ];
    if spec.kind == ExportType::OwnerStatement {
        // The owner's villas and their listings are the scope, not a listing filter.
        lines.push((
            "Owner".to_owned(),
            spec.owner_id.map(|o| o.to_string()).unwrap_or_default(),
        ));
    } else {
        lines.push(("Listings".to_owned(), listings));
    }
    if is_reservations {
        let any = || "Any".to_owned();
        lines.push(("Status".to_owned(), spec.status.clone().unwrap_or_else(any)));
        lines.push((
            "Channel".to_owned(),
            spec.channel.clone().unwrap_or_else(any),
        ));
    }
    lines.push((
        "Generated at (UTC)".to_owned(),
        generated_at.format("%Y-%m-%d %H:%M:%S").to_string(),
    ));
    let formulas = if spec.kind == ExportType::OwnerStatement {
        crate::reporting::statements::DEFINITIONS
    } else {
        figures::DEFINITIONS
    };
    lines.push(("Formulas".to_owned(), formulas.to_owned()));
    lines
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;

    #[test]
    fn the_definitions_state_the_period_the_filters_and_the_formulas() {
        let at = "2026-04-01T08:30:00Z".parse::<DateTime<Utc>>().unwrap();
        let lines = definitions(
            &spec(ExportType::Revenue),
            &["A".to_owned(), "B".to_owned()],
            at,
        );
        let value = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert!(value("Period").starts_with("2026-03-01 to 2026-03-31: 31 nights"));
        assert!(value("Currency").starts_with("THB"));
        assert_eq!(value("Listings"), "Every ACTIVE listing (2): A, B");
        assert_eq!(value("Generated at (UTC)"), "2026-04-01 08:30:00");
        assert_eq!(value("Formulas"), figures::DEFINITIONS);
        assert!(!lines.iter().any(|(l, _)| l == "Status"));

        let mut reservations = spec(ExportType::Reservations);
        reservations.start_date = None;
        reservations.end_date = None;
        reservations.channel = Some("AIRBNB".to_owned());
        let lines = definitions(&reservations, &[], at);
        let labels: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Export",
                "Period",
                "Currency",
                "Listings",
                "Status",
                "Channel",
                "Generated at (UTC)",
                "Formulas"
            ]
        );
        assert_eq!(lines[1].1, "Every check-in date");
        assert_eq!(lines[3].1, "Every listing (no listing filter)");
        assert_eq!(lines[4].1, "Any");
        assert_eq!(lines[5].1, "AIRBNB");
    }

    #[test]
    fn long_lists_of_names_are_cut() {
        let names: Vec<String> = (0..2_000).map(|i| format!("Villa {i:04}")).collect();
        let text = name_list(&names);
        assert!(text.len() < MAX_NAMES_TEXT + 40);
        assert!(text.starts_with("Villa 0000, Villa 0001"));
        assert!(text.ends_with("more"));
    }
}
