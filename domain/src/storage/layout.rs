//! Where things live in the document store: one folder per villa under `Villas/`, with the
//! document folders of the onboarding spec and one folder per photo category under `Photos/`;
//! the reporting API's spreadsheet exports under `Exports/`.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{SafeName, StoragePath};
use crate::Result;

/// The onboarding spec's document types, each with its folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DocumentType {
    PropertyContract,
    InsuranceCertificate,
    PropertyTitle,
    TaxDocuments,
    UtilityBills,
    LicensesPermits,
    InventoryList,
    EmergencyContacts,
    HouseRules,
    StaffContracts,
    MaintenanceRecords,
    Other,
}

impl DocumentType {
    pub const ALL: [DocumentType; 12] = [
        Self::PropertyContract,
        Self::InsuranceCertificate,
        Self::PropertyTitle,
        Self::TaxDocuments,
        Self::UtilityBills,
        Self::LicensesPermits,
        Self::InventoryList,
        Self::EmergencyContacts,
        Self::HouseRules,
        Self::StaffContracts,
        Self::MaintenanceRecords,
        Self::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::PropertyContract => "PROPERTY_CONTRACT",
            Self::InsuranceCertificate => "INSURANCE_CERTIFICATE",
            Self::PropertyTitle => "PROPERTY_TITLE",
            Self::TaxDocuments => "TAX_DOCUMENTS",
            Self::UtilityBills => "UTILITY_BILLS",
            Self::LicensesPermits => "LICENSES_PERMITS",
            Self::InventoryList => "INVENTORY_LIST",
            Self::EmergencyContacts => "EMERGENCY_CONTACTS",
            Self::HouseRules => "HOUSE_RULES",
            Self::StaffContracts => "STAFF_CONTRACTS",
            Self::MaintenanceRecords => "MAINTENANCE_RECORDS",
            Self::Other => "OTHER",
        }
    }

    /// The folder of the spec's table, under the villa folder.
    pub fn folder(self) -> &'static str {
        match self {
            Self::PropertyContract => "Documents/01-Legal-Documents/Property-Contracts",
            Self::InsuranceCertificate => "Documents/02-Financial-Documents/Insurance-Policies",
            Self::PropertyTitle => "Documents/01-Legal-Documents/Property-Title-Deeds",
            Self::TaxDocuments => "Documents/02-Financial-Documents/Tax-Documents",
            Self::UtilityBills => "Documents/02-Financial-Documents/Utility-Accounts",
            Self::LicensesPermits => "Documents/01-Legal-Documents/Licenses-Permits",
            Self::InventoryList => "Documents/03-Operational-Documents/Inventory-Lists",
            Self::EmergencyContacts => "Documents/03-Operational-Documents/Emergency-Contacts",
            Self::HouseRules => "Documents/03-Operational-Documents/House-Rules",
            Self::StaffContracts => "Documents/04-Contracts-Agreements/Staff-Contracts",
            Self::MaintenanceRecords => "Documents/04-Contracts-Agreements/Maintenance-Contracts",
            Self::Other => "Documents/Other",
        }
    }

    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        crate::error::one_of(field, raw, &Self::ALL, Self::as_str)
    }
}

/// Photo categories: lowercase in requests, uppercase in responses and the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PhotoCategory {
    Logo,
    FloorPlan,
    ExteriorViews,
    InteriorLivingSpaces,
    Bedrooms,
    Bathrooms,
    Kitchen,
    DiningAreas,
    PoolOutdoorAreas,
    GardenLandscaping,
    AmenitiesFacilities,
    ViewsSurroundings,
    StaffAreas,
    UtilityAreas,
    Videos,
    DroneShots,
    Entertainment,
}

impl PhotoCategory {
    pub const ALL: [PhotoCategory; 17] = [
        Self::Logo,
        Self::FloorPlan,
        Self::ExteriorViews,
        Self::InteriorLivingSpaces,
        Self::Bedrooms,
        Self::Bathrooms,
        Self::Kitchen,
        Self::DiningAreas,
        Self::PoolOutdoorAreas,
        Self::GardenLandscaping,
        Self::AmenitiesFacilities,
        Self::ViewsSurroundings,
        Self::StaffAreas,
        Self::UtilityAreas,
        Self::Videos,
        Self::DroneShots,
        Self::Entertainment,
    ];

    /// The request spelling (`pool_outdoor_areas`).
    pub fn request_name(self) -> &'static str {
        match self {
            Self::Logo => "logo",
            Self::FloorPlan => "floor_plan",
            Self::ExteriorViews => "exterior_views",
            Self::InteriorLivingSpaces => "interior_living_spaces",
            Self::Bedrooms => "bedrooms",
            Self::Bathrooms => "bathrooms",
            Self::Kitchen => "kitchen",
            Self::DiningAreas => "dining_areas",
            Self::PoolOutdoorAreas => "pool_outdoor_areas",
            Self::GardenLandscaping => "garden_landscaping",
            Self::AmenitiesFacilities => "amenities_facilities",
            Self::ViewsSurroundings => "views_surroundings",
            Self::StaffAreas => "staff_areas",
            Self::UtilityAreas => "utility_areas",
            Self::Videos => "videos",
            Self::DroneShots => "drone_shots",
            Self::Entertainment => "entertainment",
        }
    }

    /// The response and database spelling (`POOL_OUTDOOR_AREAS`).
    pub fn as_str(self) -> String {
        self.request_name().to_uppercase()
    }

    /// The folder under `Photos/`.
    pub fn folder(self) -> &'static str {
        match self {
            Self::Logo => "Logo",
            Self::FloorPlan => "Floor-Plan",
            Self::ExteriorViews => "Exterior-Views",
            Self::InteriorLivingSpaces => "Interior-Living-Spaces",
            Self::Bedrooms => "Bedrooms",
            Self::Bathrooms => "Bathrooms",
            Self::Kitchen => "Kitchen",
            Self::DiningAreas => "Dining-Areas",
            Self::PoolOutdoorAreas => "Pool-Outdoor-Areas",
            Self::GardenLandscaping => "Garden-Landscaping",
            Self::AmenitiesFacilities => "Amenities-Facilities",
            Self::ViewsSurroundings => "Views-Surroundings",
            Self::StaffAreas => "Staff-Areas",
            Self::UtilityAreas => "Utility-Areas",
            Self::Videos => "Videos",
            Self::DroneShots => "Drone-Shots",
            Self::Entertainment => "Entertainment",
        }
    }

    /// Accepts the request spelling, and the response spelling for clients that echo it back.
    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        let lower = raw.trim().to_ascii_lowercase();
        crate::error::one_of(field, &lower, &Self::ALL, Self::request_name)
    }

    /// Checks `subfolder` against the category (unknown: `None`, already reported): a bedroom's
    /// photos need the bedroom's name, no other category takes one.
    pub fn parse_subfolder(
        category: Option<Self>,
        raw: Option<&str>,
        problems: &mut crate::Problems,
    ) -> Option<SafeName> {
        match (category?, raw) {
            (Self::Bedrooms, None) => {
                problems.push(
                    "subfolder",
                    "required",
                    "subfolder (the bedroom's name) is required for bedrooms",
                );
                None
            }
            (Self::Bedrooms, Some(raw)) => problems.check(SafeName::parse("subfolder", raw)),
            (_, Some(_)) => {
                problems.push(
                    "subfolder",
                    "not_allowed",
                    "subfolder is only for the bedrooms category",
                );
                None
            }
            (_, None) => None,
        }
    }
}

/// The villa's folder name: its sanitized code, then the last 8 hex digits of its id (a v7 id's
/// random tail: its first digits are a timestamp, alike for villas made within a minute), so that
/// two codes that sanitize alike ("A B", "A-B") still get folders of their own and a rename of
/// the villa never moves its files.
pub fn villa_folder(villa_code: &str, villa_id: Uuid) -> StoragePath {
    let mut code = SafeName::parse("villaCode", villa_code)
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "villa".to_owned());
    // Room for `_<8 hex>`: a long code is cut, never the id that tells folders apart (the
    // characters are ASCII, so any length is a boundary).
    code.truncate(super::MAX_NAME_LEN - 9);
    let hex = villa_id.simple().to_string();
    let short = &hex[hex.len() - 8..];
    // Both parts are made of safe characters, so this parse cannot fail; "villa" covers it anyway.
    let name = SafeName::parse("villaCode", &format!("{code}_{short}"))
        .unwrap_or_else(|_| SafeName::fallback());
    StoragePath::constant("Villas").child(&name)
}

/// Where a document of `kind` named `file` goes.
pub fn document_path(villa: &StoragePath, kind: DocumentType, file: &SafeName) -> StoragePath {
    villa.join(kind.folder()).child(file)
}

/// The folder of a photo category (`Photos/Bedrooms/<subfolder>` for bedrooms).
pub fn photo_folder(
    villa: &StoragePath,
    category: PhotoCategory,
    subfolder: Option<&SafeName>,
) -> StoragePath {
    let folder = villa.join("Photos").join(category.folder());
    match subfolder {
        Some(sub) => folder.child(sub),
        None => folder,
    }
}

/// Where a villa's maintenance field notes (voice notes, photos) go.
pub fn field_notes_folder(villa: &StoragePath) -> StoragePath {
    villa.join("Maintenance").join("Field-Notes")
}

/// Where a reporting export's file goes: `Exports/<name>`. The export job names it
/// `<exportId>-<fileName>`, so two exports never share a file and a retried job replaces its own.
pub fn export_path(name: &SafeName) -> StoragePath {
    StoragePath::constant("Exports").child(name)
}

/// Every folder of a new villa's tree: each document folder and each photo category folder.
pub fn villa_tree(villa: &StoragePath) -> Vec<StoragePath> {
    let mut folders: Vec<StoragePath> = DocumentType::ALL
        .iter()
        .map(|t| villa.join(t.folder()))
        .collect();
    folders.extend(
        PhotoCategory::ALL
            .iter()
            .map(|c| photo_folder(villa, *c, None)),
    );
    folders.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    folders.dedup();
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_spec() {
        let id: Uuid = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b".parse().unwrap();
        let villa = villa_folder("PHK 001", id);
        assert_eq!(villa.as_str(), "Villas/PHK-001_2e3f4a5b");
        let file = SafeName::parse("fileName", "rules.pdf").unwrap();
        assert_eq!(
            document_path(&villa, DocumentType::HouseRules, &file).as_str(),
            "Villas/PHK-001_2e3f4a5b/Documents/03-Operational-Documents/House-Rules/rules.pdf"
        );
        let sub = SafeName::parse("subfolder", "Master Bedroom").unwrap();
        assert_eq!(
            photo_folder(&villa, PhotoCategory::Bedrooms, Some(&sub)).as_str(),
            "Villas/PHK-001_2e3f4a5b/Photos/Bedrooms/Master-Bedroom"
        );
        assert_eq!(
            PhotoCategory::PoolOutdoorAreas.folder(),
            "Pool-Outdoor-Areas"
        );
        assert_eq!(
            PhotoCategory::PoolOutdoorAreas.as_str(),
            "POOL_OUTDOOR_AREAS"
        );
    }

    #[test]
    fn exports_live_under_their_own_folder() {
        let id: Uuid = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b".parse().unwrap();
        let file = format!("{id}-revenue_2026-03-01_2026-03-31.xlsx");
        let name = SafeName::parse("fileName", &file).unwrap();
        assert_eq!(
            export_path(&name).as_str(),
            "Exports/0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b-revenue_2026-03-01_2026-03-31.xlsx"
        );
        let escaping = SafeName::parse("fileName", "../../etc/passwd").unwrap();
        assert_eq!(export_path(&escaping).as_str(), "Exports/..-..-etc-passwd");
    }

    #[test]
    fn the_tree_has_every_document_and_photo_folder_once() {
        let villa = villa_folder("X", Uuid::nil());
        let tree = villa_tree(&villa);
        assert_eq!(tree.len(), 12 + 17);
        assert!(
            tree.iter()
                .all(|p| p.as_str().starts_with("Villas/X_00000000/"))
        );
    }

    #[test]
    fn closed_sets_parse_and_refuse() {
        assert_eq!(
            DocumentType::parse("documentType", "HOUSE_RULES").unwrap(),
            DocumentType::HouseRules
        );
        assert!(DocumentType::parse("documentType", "house_rules").is_err());
        assert_eq!(
            PhotoCategory::parse("category", "pool_outdoor_areas").unwrap(),
            PhotoCategory::PoolOutdoorAreas
        );
        assert_eq!(
            PhotoCategory::parse("category", "BEDROOMS").unwrap(),
            PhotoCategory::Bedrooms
        );
        assert!(PhotoCategory::parse("category", "garage").is_err());
    }

    #[test]
    fn the_longest_path_fits_sharepoint_and_keeps_the_villa_apart() {
        let long = "x".repeat(500);
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let villa = villa_folder(&long, a);
        assert_ne!(villa, villa_folder(&long, b), "the id survives a long code");
        assert!(
            villa.as_str().ends_with(&a.simple().to_string()[24..]),
            "{villa}"
        );
        let sub = SafeName::parse("subfolder", &long).unwrap();
        let file = SafeName::parse("fileName", &format!("{long}.jpeg")).unwrap();
        let path = photo_folder(&villa, PhotoCategory::Bedrooms, Some(&sub)).child(&file);
        assert!(
            path.as_str().len() <= 340,
            "{} characters",
            path.as_str().len()
        );
        assert!(path.as_str().ends_with(".jpeg"));
    }
}
