//! The villa register, as the villa-management surface (`api/src/management/`) keeps it: villas,
//! their owners, staff and their assignments, and a villa's photos and documents.
//!
//! Every other surface hangs its records on a villa and reads these modules for it (a work
//! order's villa, an inventory property's villa, the wizard writing a villa's and an owner's
//! fields): they are the shared entities of the platform, kept here, next to the surface that
//! edits them, rather than in a second place.

pub mod documents;
pub mod owners;
pub mod photos;
pub mod staff;
pub mod terms;
pub mod villas;
