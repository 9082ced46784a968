//! Seed data of the fake: villa listings and two years of reservations, every status and channel
//! of Hostaway's documentation, stays across month ends, owner stays, an archived listing and
//! several currencies. Deterministic from `FakePmsConfig::seed` (a small xorshift generator, so the
//! same seed gives the same records on every machine), and fast: 100,000 reservations are built and
//! serialised from typed records, never through `serde_json::Value` maps.

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, TimeDelta};
use serde::Serialize;
use serde_json::Value;

use crate::FakePmsConfig;
use crate::store::Meta;

/// Timestamps as Hostaway writes them (UTC).
pub(crate) const TIMESTAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S";
const DATE_FORMAT: &str = "%Y-%m-%d";
const DAY: i64 = 86_400;

/// xorshift64*: small, fast and the same everywhere; quality is ample for seed data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        // splitmix64 first, so that neighbouring seeds give unrelated streams and the state is
        // never zero (xorshift stays at zero forever).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// Uniform in `lo..=hi` (`lo` when the range is empty).
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            lo + self.below((hi - lo + 1) as u64) as i64
        }
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn weighted<T: Copy>(&mut self, items: &[(T, u32)]) -> T {
        let total: u64 = items.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut roll = self.below(total);
        for (item, weight) in items {
            if roll < u64::from(*weight) {
                return *item;
            }
            roll -= u64::from(*weight);
        }
        items[items.len() - 1].0
    }

    fn code(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len).map(|_| char::from(self.pick(alphabet))).collect()
    }
}

/// Where the villas are. The first five cover every currency, so even a handful of listings has
/// more than one.
struct Site {
    city: &'static str,
    state: &'static str,
    country: &'static str,
    country_code: &'static str,
    currency: &'static str,
    time_zone: &'static str,
    lat: f64,
    lng: f64,
    zipcode: &'static str,
    street: &'static str,
    kind: &'static str,
}

const SITES: [Site; 12] = [
    Site {
        city: "Canggu",
        state: "Bali",
        country: "Indonesia",
        country_code: "ID",
        currency: "IDR",
        time_zone: "Asia/Makassar",
        lat: -8.6478,
        lng: 115.1385,
        zipcode: "80361",
        street: "Jl. Pantai Batu Bolong",
        kind: "Private Pool Villa",
    },
    Site {
        city: "Koh Samui",
        state: "Surat Thani",
        country: "Thailand",
        country_code: "TH",
        currency: "THB",
        time_zone: "Asia/Bangkok",
        lat: 9.5120,
        lng: 100.0136,
        zipcode: "84320",
        street: "Moo 5, Bophut",
        kind: "Sea View Villa",
    },
    Site {
        city: "Lagos",
        state: "Algarve",
        country: "Portugal",
        country_code: "PT",
        currency: "EUR",
        time_zone: "Europe/Lisbon",
        lat: 37.1028,
        lng: -8.6730,
        zipcode: "8600-315",
        street: "Estrada da Ponta da Piedade",
        kind: "Cliffside Villa",
    },
    Site {
        city: "Tulum",
        state: "Quintana Roo",
        country: "Mexico",
        country_code: "MX",
        currency: "MXN",
        time_zone: "America/Cancun",
        lat: 20.2114,
        lng: -87.4654,
        zipcode: "77760",
        street: "Carretera Tulum-Boca Paila",
        kind: "Jungle Retreat",
    },
    Site {
        city: "Seminyak",
        state: "Bali",
        country: "Indonesia",
        country_code: "ID",
        currency: "USD",
        time_zone: "Asia/Makassar",
        lat: -8.6913,
        lng: 115.1682,
        zipcode: "80361",
        street: "Jl. Kayu Aya",
        kind: "Luxury Villa",
    },
    Site {
        city: "Phuket",
        state: "Phuket",
        country: "Thailand",
        country_code: "TH",
        currency: "THB",
        time_zone: "Asia/Bangkok",
        lat: 7.8804,
        lng: 98.3923,
        zipcode: "83110",
        street: "Kamala Beach Road",
        kind: "Beachfront Villa",
    },
    Site {
        city: "Ubud",
        state: "Bali",
        country: "Indonesia",
        country_code: "ID",
        currency: "IDR",
        time_zone: "Asia/Makassar",
        lat: -8.5069,
        lng: 115.2625,
        zipcode: "80571",
        street: "Jl. Raya Sayan",
        kind: "Rice Field Villa",
    },
    Site {
        city: "Carvoeiro",
        state: "Algarve",
        country: "Portugal",
        country_code: "PT",
        currency: "EUR",
        time_zone: "Europe/Lisbon",
        lat: 37.0966,
        lng: -8.4717,
        zipcode: "8400-517",
        street: "Rua do Farol",
        kind: "Ocean View Villa",
    },
    Site {
        city: "Tulum",
        state: "Quintana Roo",
        country: "Mexico",
        country_code: "MX",
        currency: "USD",
        time_zone: "America/Cancun",
        lat: 20.1960,
        lng: -87.4390,
        zipcode: "77780",
        street: "Aldea Zama",
        kind: "Cenote Villa",
    },
    Site {
        city: "Phuket",
        state: "Phuket",
        country: "Thailand",
        country_code: "TH",
        currency: "USD",
        time_zone: "Asia/Bangkok",
        lat: 7.9519,
        lng: 98.2796,
        zipcode: "83150",
        street: "Layan Beach Road",
        kind: "Hillside Pool Villa",
    },
    Site {
        city: "Uluwatu",
        state: "Bali",
        country: "Indonesia",
        country_code: "ID",
        currency: "USD",
        time_zone: "Asia/Makassar",
        lat: -8.8291,
        lng: 115.0849,
        zipcode: "80364",
        street: "Jl. Labuansait",
        kind: "Clifftop Villa",
    },
    Site {
        city: "Koh Samui",
        state: "Surat Thani",
        country: "Thailand",
        country_code: "TH",
        currency: "USD",
        time_zone: "Asia/Bangkok",
        lat: 9.5604,
        lng: 100.0254,
        zipcode: "84330",
        street: "Choeng Mon Beach",
        kind: "Family Villa",
    },
];

const VILLA_NAMES: [&str; 40] = [
    "Amara",
    "Kayu Manis",
    "Sayang",
    "Bayu",
    "Lotus",
    "Frangipani",
    "Tamarind",
    "Coral",
    "Jasmine",
    "Mango Tree",
    "Sunset",
    "Ocean Breeze",
    "Palm Grove",
    "Casa Luna",
    "Casa Sol",
    "Paraiso",
    "Azul",
    "Jade",
    "Banyan",
    "Teak House",
    "Sea Star",
    "Casa Branca",
    "Oliveira",
    "Figueira",
    "Laguna",
    "Cenote",
    "Selva",
    "Samsara",
    "Anika",
    "Dewi",
    "Surya",
    "Chandra",
    "Baan Suan",
    "Baan Talay",
    "Rimba",
    "Serenity",
    "Moonstone",
    "Sandalwood",
    "Driftwood",
    "Coconut",
];

const FIRST_NAMES: [&str; 40] = [
    "Emma",
    "Liam",
    "Sofia",
    "Noah",
    "Mia",
    "Lucas",
    "Olivia",
    "Mateo",
    "Chloe",
    "Hiroshi",
    "Yuki",
    "Anna",
    "Jonas",
    "Léa",
    "Hugo",
    "Isabella",
    "Daniel",
    "Priya",
    "Arjun",
    "Wei",
    "Mei",
    "Ji-woo",
    "Minh",
    "Sarah",
    "James",
    "Charlotte",
    "Oliver",
    "Amelia",
    "Lars",
    "Ingrid",
    "Marco",
    "Giulia",
    "Carlos",
    "Valentina",
    "Thomas",
    "Sophie",
    "Ahmed",
    "Fatima",
    "Jack",
    "Ava",
];

const LAST_NAMES: [&str; 40] = [
    "Smith",
    "Müller",
    "Rossi",
    "García",
    "Tanaka",
    "Kim",
    "Nguyen",
    "Dubois",
    "Jansen",
    "Silva",
    "Johansson",
    "Novak",
    "Kowalski",
    "Brown",
    "Wilson",
    "Taylor",
    "Martin",
    "Bernard",
    "Schmidt",
    "Fischer",
    "Ricci",
    "López",
    "Fernández",
    "Suzuki",
    "Sato",
    "Park",
    "Chen",
    "Wang",
    "Patel",
    "Sharma",
    "O'Brien",
    "Murphy",
    "Andersen",
    "Nielsen",
    "Costa",
    "Santos",
    "Hernández",
    "Moreau",
    "Van Dijk",
    "Williams",
];

/// (country code, locale, city)
const GUEST_ORIGINS: [(&str, &str, &str); 16] = [
    ("US", "en-US", "Austin"),
    ("GB", "en-GB", "London"),
    ("AU", "en-AU", "Sydney"),
    ("DE", "de-DE", "Munich"),
    ("FR", "fr-FR", "Lyon"),
    ("NL", "nl-NL", "Amsterdam"),
    ("SG", "en-SG", "Singapore"),
    ("JP", "ja-JP", "Osaka"),
    ("CA", "en-CA", "Toronto"),
    ("KR", "ko-KR", "Seoul"),
    ("IT", "it-IT", "Milan"),
    ("ES", "es-ES", "Madrid"),
    ("SE", "sv-SE", "Stockholm"),
    ("BR", "pt-BR", "São Paulo"),
    ("IN", "en-IN", "Mumbai"),
    ("CN", "zh-CN", "Shanghai"),
];

/// Every status of Hostaway's reservation statuses page, with how common it is.
const STATUSES: [(&str, u32); 16] = [
    ("new", 440),
    ("modified", 170),
    ("cancelled", 130),
    ("ownerStay", 40),
    ("pending", 15),
    ("awaitingPayment", 15),
    ("awaitingGuestVerification", 10),
    ("unconfirmed", 10),
    ("declined", 20),
    ("expired", 20),
    ("inquiry", 40),
    ("inquiryPreapproved", 15),
    ("inquiryDenied", 15),
    ("inquiryTimedout", 15),
    ("inquiryNotPossible", 10),
    ("unknown", 10),
];

/// One channel: id, channel name, `source`, share of the bookings, commission rate (None: the
/// channel charges none and Hostaway leaves the amount null).
#[derive(Clone, Copy)]
struct Channel {
    id: i64,
    name: &'static str,
    source: &'static str,
    weight: u32,
    commission: Option<f64>,
}

/// The channels of the table (2018 and 2001 Airbnb, 2005 Booking.com, 2002 and 2010 Vrbo,
/// 2007 Expedia, 2000 and 2013 direct, 2022 Google), one documented channel the platform maps to
/// OTHER (2019) and one id Hostaway does not document at all (2026).
const CHANNELS: [Channel; 11] = [
    Channel {
        id: 2018,
        name: "airbnbOfficial",
        source: "airbnbOfficial",
        weight: 330,
        commission: Some(0.155),
    },
    Channel {
        id: 2001,
        name: "airbnb",
        source: "airbnb",
        weight: 30,
        commission: Some(0.03),
    },
    Channel {
        id: 2005,
        name: "bookingcom",
        source: "bookingcom",
        weight: 220,
        commission: Some(0.15),
    },
    Channel {
        id: 2002,
        name: "homeaway",
        source: "homeawayApi",
        weight: 60,
        commission: Some(0.08),
    },
    Channel {
        id: 2010,
        name: "vrboical",
        source: "vrboical",
        weight: 30,
        commission: None,
    },
    Channel {
        id: 2007,
        name: "expedia",
        source: "expedia",
        weight: 60,
        commission: Some(0.18),
    },
    Channel {
        id: 2000,
        name: "direct",
        source: "manual",
        weight: 100,
        commission: None,
    },
    Channel {
        id: 2013,
        name: "bookingengine",
        source: "bookingengine",
        weight: 80,
        commission: Some(0.0),
    },
    Channel {
        id: 2022,
        name: "google",
        source: "google",
        weight: 40,
        commission: Some(0.05),
    },
    Channel {
        id: 2019,
        name: "marriott",
        source: "marriott",
        weight: 20,
        commission: Some(0.12),
    },
    Channel {
        id: 2026,
        name: "holidu",
        source: "partner",
        weight: 20,
        commission: Some(0.12),
    },
];

const AIRBNB: usize = 0;
const VRBO: usize = 3;
const DIRECT: usize = 6;

/// Units of a currency per US dollar, and its decimals.
fn currency_rate(code: &str) -> (f64, i32) {
    match code {
        "IDR" => (16_200.0, 0),
        "THB" => (36.0, 0),
        "EUR" => (0.92, 2),
        "MXN" => (17.5, 2),
        _ => (1.0, 2),
    }
}

/// Share of a stay's price that is tax, by country.
fn tax_rate(country: &str) -> f64 {
    match country {
        "Indonesia" => 0.10,
        "Thailand" => 0.07,
        "Mexico" => 0.16,
        "Portugal" => 0.06,
        _ => 0.08,
    }
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

pub(crate) fn format_timestamp(secs: i64) -> String {
    DateTime::from_timestamp(secs, 0)
        .map(|t| t.format(TIMESTAMP_FORMAT).to_string())
        .unwrap_or_default()
}

fn format_date(date: NaiveDate) -> String {
    date.format(DATE_FORMAT).to_string()
}

pub(crate) fn midnight(date: NaiveDate) -> i64 {
    date.and_time(NaiveTime::MIN).and_utc().timestamp()
}

/// A listing as Hostaway's listing object documents it (a subset of its fields).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListingRecord {
    id: i64,
    property_type_id: i64,
    name: String,
    external_listing_name: String,
    internal_listing_name: String,
    description: String,
    house_rules: &'static str,
    key_pickup: &'static str,
    country: &'static str,
    country_code: &'static str,
    state: &'static str,
    city: &'static str,
    street: String,
    address: String,
    public_address: String,
    zipcode: &'static str,
    price: f64,
    star_rating: f64,
    average_review_rating: f64,
    weekly_discount: f64,
    monthly_discount: f64,
    person_capacity: i64,
    max_children_allowed: Option<i64>,
    max_pets_allowed: Option<i64>,
    lat: f64,
    lng: f64,
    check_in_time_start: i64,
    check_in_time_end: i64,
    check_out_time: i64,
    cancellation_policy: &'static str,
    square_meters: i64,
    special_status: Option<&'static str>,
    room_type: &'static str,
    bathroom_type: &'static str,
    bedrooms_number: i64,
    beds_number: i64,
    bathrooms_number: i64,
    guest_bathrooms_number: i64,
    min_nights: i64,
    max_nights: i64,
    guests_included: i64,
    cleaning_fee: f64,
    price_for_extra_person: f64,
    refundable_damage_deposit: f64,
    instant_bookable: i64,
    contact_name: &'static str,
    contact_sur_name: &'static str,
    contact_phone1: &'static str,
    contact_email: &'static str,
    language: &'static str,
    currency_code: &'static str,
    time_zone_name: &'static str,
    is_active: i64,
    latest_activity_on: String,
    listing_amenities: Vec<Value>,
    listing_bed_types: Vec<Value>,
    listing_images: Vec<Value>,
    custom_field_values: Vec<Value>,
}

/// `config.listings` villa listings, ids from 40000, internal names `VL-001`, `VL-002`, ...
/// (matched against villa codes by the platform). One listing (the eighth, or the last of a
/// shorter list) is archived and inactive.
pub fn seed_listings(config: &FakePmsConfig) -> Vec<Value> {
    let today = config.resolved_today();
    let mut rng = Rng::new(config.seed ^ 0x4C49_5354);
    let archived = if config.listings >= 2 {
        Some(config.listings.min(8) - 1)
    } else {
        None
    };
    (0..config.listings)
        .filter_map(|i| {
            let site = &SITES[i % SITES.len()];
            let villa = VILLA_NAMES[i % VILLA_NAMES.len()];
            let villa = match i / VILLA_NAMES.len() {
                0 => villa.to_owned(),
                n => format!("{villa} {}", n + 1),
            };
            let bedrooms = rng.weighted(&[(2i64, 20), (3, 30), (4, 25), (5, 15), (6, 10)]);
            let capacity = bedrooms * 2 + rng.between(0, 2);
            let (rate, decimals) = currency_rate(site.currency);
            let nightly_usd = 90.0 + 70.0 * bedrooms as f64 + rng.between(0, 120) as f64;
            let name = format!(
                "Villa {villa} - {bedrooms}BR {} in {}",
                site.kind, site.city
            );
            let street = format!("{} No. {}", site.street, rng.between(1, 120));
            let is_archived = Some(i) == archived;
            let record = ListingRecord {
                id: 40_000 + i as i64,
                property_type_id: 1,
                external_listing_name: name.clone(),
                internal_listing_name: format!("VL-{:03}", i + 1),
                description: format!(
                    "{bedrooms}-bedroom villa in {}, {}: private pool, open living area, \
                     daily housekeeping and a garden terrace.",
                    site.city, site.country
                ),
                name,
                house_rules: "No parties or events. Quiet hours after 22:00.",
                key_pickup: "Our host meets you at the villa.",
                country: site.country,
                country_code: site.country_code,
                state: site.state,
                city: site.city,
                address: format!(
                    "{street}, {}, {} {}, {}",
                    site.city, site.state, site.zipcode, site.country
                ),
                public_address: format!(
                    "{}, {} {}, {}",
                    site.city, site.state, site.zipcode, site.country
                ),
                street,
                zipcode: site.zipcode,
                price: round(nightly_usd * rate, decimals),
                star_rating: round(3.5 + rng.unit() * 1.5, 1),
                average_review_rating: round(8.0 + rng.unit() * 2.0, 1),
                weekly_discount: 0.9,
                monthly_discount: 0.8,
                person_capacity: capacity,
                max_children_allowed: Some(rng.between(0, 4)),
                max_pets_allowed: if rng.chance(0.3) { Some(1) } else { None },
                lat: round(site.lat + (rng.unit() - 0.5) * 0.04, 5),
                lng: round(site.lng + (rng.unit() - 0.5) * 0.04, 5),
                check_in_time_start: 15,
                check_in_time_end: 22,
                check_out_time: 11,
                cancellation_policy: rng.pick(&["flexible", "moderate", "strict"]),
                square_meters: 80 + 60 * bedrooms + rng.between(0, 80),
                special_status: if is_archived { Some("archived") } else { None },
                room_type: "entire_home",
                bathroom_type: "private",
                bedrooms_number: bedrooms,
                beds_number: bedrooms + rng.between(0, 1),
                bathrooms_number: bedrooms,
                guest_bathrooms_number: bedrooms,
                min_nights: rng.between(1, 3),
                max_nights: 90,
                guests_included: capacity,
                cleaning_fee: round((40.0 + 15.0 * bedrooms as f64) * rate, decimals),
                price_for_extra_person: round(25.0 * rate, decimals),
                refundable_damage_deposit: round(300.0 * rate, decimals),
                instant_bookable: i64::from(rng.chance(0.6)),
                contact_name: "Villa",
                contact_sur_name: "Operations",
                contact_phone1: "+62 361 555 0100",
                contact_email: "reservations@example.com",
                language: "en",
                currency_code: site.currency,
                time_zone_name: site.time_zone,
                is_active: i64::from(!is_archived),
                latest_activity_on: format_timestamp(midnight(today) - rng.between(DAY, 90 * DAY)),
                listing_amenities: Vec::new(),
                listing_bed_types: Vec::new(),
                listing_images: Vec::new(),
                custom_field_values: Vec::new(),
            };
            serde_json::to_value(record).ok()
        })
        .collect()
}

/// A reservation as Hostaway's reservation object documents it (most of its fields: a record is
/// about 1.5 KB, like a real one).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReservationRecord {
    id: i64,
    listing_map_id: i64,
    channel_id: i64,
    source: &'static str,
    channel_name: &'static str,
    reservation_id: String,
    hostaway_reservation_id: i64,
    channel_reservation_id: String,
    external_property_id: Option<String>,
    assignee_user_id: Option<i64>,
    is_processed: i64,
    is_instant_booked: i64,
    reservation_date: String,
    pending_expire_date: Option<String>,
    guest_name: String,
    guest_first_name: String,
    guest_last_name: String,
    guest_external_account_id: Option<String>,
    guest_city: Option<&'static str>,
    guest_country: Option<&'static str>,
    guest_email: Option<String>,
    guest_recommendations: i64,
    guest_trips: i64,
    number_of_guests: i64,
    adults: i64,
    children: Option<i64>,
    arrival_date: String,
    departure_date: String,
    is_dates_unspecified: i64,
    previous_arrival_date: Option<String>,
    previous_departure_date: Option<String>,
    check_in_time: i64,
    check_out_time: i64,
    nights: i64,
    phone: Option<String>,
    total_price: f64,
    tax_amount: Option<f64>,
    channel_commission_amount: Option<f64>,
    /// Outer `None`: the field is missing from the record (it sometimes is on Hostaway).
    #[serde(skip_serializing_if = "Option::is_none")]
    hostaway_commission_amount: Option<Option<f64>>,
    cleaning_fee: Option<f64>,
    security_deposit_fee: Option<f64>,
    is_paid: Option<i64>,
    payment_method: Option<&'static str>,
    currency: String,
    status: &'static str,
    cancellation_date: Option<String>,
    cancelled_by: Option<&'static str>,
    host_note: Option<&'static str>,
    guest_note: Option<&'static str>,
    guest_locale: Option<&'static str>,
    door_code: Option<String>,
    comment: Option<String>,
    confirmation_code: Option<String>,
    airbnb_expected_payout_amount: Option<f64>,
    airbnb_listing_base_price: Option<f64>,
    airbnb_listing_host_fee: Option<f64>,
    airbnb_cancellation_policy: Option<&'static str>,
    is_starred: i64,
    is_archived: i64,
    is_pinned: i64,
    reservation_agreement: &'static str,
    cancellation_policy: &'static str,
    inserted_on: String,
    updated_on: String,
    latest_activity_on: String,
    custom_field_values: Vec<Value>,
    reservation_fees: Vec<Value>,
}

/// What a reservation needs of its listing.
struct ListingFacts {
    id: i64,
    currency: String,
    decimals: i32,
    nightly: f64,
    cleaning_fee: f64,
    deposit: f64,
    capacity: i64,
    tax: f64,
}

impl ListingFacts {
    fn of(listing: &Value) -> Option<Self> {
        let id = listing.get("id")?.as_i64()?;
        let currency = listing
            .get("currencyCode")
            .and_then(Value::as_str)
            .unwrap_or("USD")
            .to_owned();
        let (rate, decimals) = currency_rate(&currency);
        let number =
            |key: &str, default: f64| listing.get(key).and_then(Value::as_f64).unwrap_or(default);
        Some(ListingFacts {
            id,
            decimals,
            nightly: number("price", 250.0 * rate),
            cleaning_fee: number("cleaningFee", 80.0 * rate),
            deposit: number("refundableDamageDeposit", 300.0 * rate),
            capacity: listing
                .get("personCapacity")
                .and_then(Value::as_i64)
                .unwrap_or(6)
                .max(1),
            tax: tax_rate(listing.get("country").and_then(Value::as_str).unwrap_or("")),
            currency,
        })
    }
}

/// A stay before it becomes a record: listing index, arrival (days from the window's start),
/// nights, and when it was booked (unix seconds).
struct Stay {
    listing: usize,
    arrival: i64,
    nights: i64,
    booked: i64,
}

/// `config.reservations` reservations of `listings`, arrivals from a year before `today` to a
/// year after, as JSON values (ordered by id).
pub fn seed_reservations(config: &FakePmsConfig, listings: &[Value]) -> Vec<Value> {
    build_reservations(config, listings, |record, _| {
        serde_json::to_value(record).ok()
    })
}

/// The same records, serialised once, with what the server orders and filters them by.
pub(crate) fn seed_reservation_json(
    config: &FakePmsConfig,
    listings: &[Value],
) -> Vec<(Meta, String)> {
    build_reservations(config, listings, |record, meta| {
        serde_json::to_string(record).ok().map(|json| (meta, json))
    })
}

fn build_reservations<T>(
    config: &FakePmsConfig,
    listings: &[Value],
    mut emit: impl FnMut(&ReservationRecord, Meta) -> Option<T>,
) -> Vec<T> {
    let facts: Vec<ListingFacts> = listings.iter().filter_map(ListingFacts::of).collect();
    let n = config.reservations;
    if facts.is_empty() || n == 0 {
        return Vec::new();
    }
    let today = config.resolved_today();
    let window_start = today - TimeDelta::days(365);
    let window_secs = midnight(window_start);
    const WINDOW_DAYS: i64 = 730;
    // Every stored timestamp is before today: a record changed later (`update_reservation`, at
    // the real now) always moves behind every seeded one.
    let latest = midnight(today) - 1;
    let mut rng = Rng::new(config.seed);

    // Stays per listing, each in its own slot of the two years so a villa is never double-booked
    // while the listing has room for them (past ~300 reservations per listing they overlap).
    let mut stays = Vec::with_capacity(n);
    let listings_count = facts.len();
    for listing in 0..listings_count {
        let count = n / listings_count + usize::from(listing < n % listings_count);
        if count == 0 {
            continue;
        }
        let slot = WINDOW_DAYS as f64 / count as f64;
        for r in 0..count {
            let from = (r as f64 * slot).floor() as i64;
            let to = ((r + 1) as f64 * slot).floor() as i64;
            let span = (to - from).max(1);
            let (nights, offset) = if span >= 3 {
                let longest = (span - 1).min(if rng.chance(0.08) { 21 } else { 10 });
                let nights = rng.between(2.min(longest), longest);
                (nights, rng.between(0, span - nights))
            } else {
                (rng.between(1, 7), 0)
            };
            let arrival = from + offset;
            let arrival_secs = window_secs + arrival * DAY;
            // Booked 1 to 150 days ahead, never after the seed's last instant.
            let lead = rng.weighted(&[((1i64, 14i64), 30), ((15, 60), 45), ((61, 150), 25)]);
            let mut booked =
                arrival_secs - rng.between(lead.0, lead.1) * DAY + rng.between(0, DAY - 1);
            if booked > latest - DAY {
                booked = latest - DAY - rng.between(0, 45 * DAY);
            }
            stays.push(Stay {
                listing,
                arrival,
                nights,
                booked,
            });
        }
    }
    // Ids grow with the booking time, as Hostaway's do.
    stays.sort_by_key(|s| (s.booked, s.listing, s.arrival));

    let mut out = Vec::with_capacity(stays.len());
    let mut id = 1_000_000i64;
    let mut next_channel = 0usize;
    let channel_weights: Vec<(usize, u32)> = CHANNELS
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.weight))
        .collect();
    for (k, stay) in stays.iter().enumerate() {
        let listing = &facts[stay.listing];
        // The first reservations take every status, then every channel, in turn: even a small
        // seed has all of them.
        let status = if k < STATUSES.len() {
            STATUSES[k].0
        } else {
            rng.weighted(&STATUSES)
        };
        let channel = match status {
            "ownerStay" => CHANNELS[DIRECT],
            "pending"
            | "awaitingPayment"
            | "awaitingGuestVerification"
            | "declined"
            | "expired"
            | "inquiryPreapproved"
            | "inquiryDenied"
            | "inquiryTimedout"
            | "inquiryNotPossible"
            | "unknown" => CHANNELS[AIRBNB],
            "unconfirmed" => CHANNELS[VRBO],
            _ if next_channel < CHANNELS.len() => {
                next_channel += 1;
                CHANNELS[next_channel - 1]
            }
            _ => CHANNELS[rng.weighted(&channel_weights)],
        };
        let owner = status == "ownerStay";
        let confirmed = matches!(status, "new" | "modified");

        let arrival = window_start + TimeDelta::days(stay.arrival);
        let departure = arrival + TimeDelta::days(stay.nights);
        let arrival_secs = midnight(arrival);
        let departure_secs = midnight(departure);

        let first = rng.pick(&FIRST_NAMES);
        let last = rng.pick(&LAST_NAMES);
        let origin = rng.pick(&GUEST_ORIGINS);
        let guests = rng.between(1, listing.capacity);
        let children = if guests > 2 && rng.chance(0.35) {
            rng.between(1, guests - 2)
        } else {
            0
        };

        // Money in the listing's currency: nights at the listing's price, give or take, plus
        // cleaning; tax included in the total.
        let d = listing.decimals;
        let factor = 0.85 + rng.unit() * 0.35;
        let cleaning = if owner { 0.0 } else { listing.cleaning_fee };
        let total = if owner {
            0.0
        } else {
            round(listing.nightly * stay.nights as f64 * factor + cleaning, d)
        };
        let tax = if owner {
            Some(0.0)
        } else {
            Some(round(total * listing.tax / (1.0 + listing.tax), d))
        };
        let commission = if owner {
            None
        } else {
            channel.commission.map(|rate| round(total * rate, d))
        };
        let hostaway_commission = match rng.below(6) {
            0 | 1 => None,
            2 => Some(None),
            _ if owner => Some(Some(0.0)),
            _ => Some(Some(round(total * 0.01, d))),
        };
        let airbnb = channel.id == 2018 || channel.id == 2001;

        // Timestamps: booked, inserted moments later, updated later still (much later for a
        // changed or cancelled one, or around checkout), latest activity at or after the update.
        let inserted = stay.booked + rng.between(2, 120);
        let mut updated = match status {
            "new" | "ownerStay" | "inquiry" => inserted + rng.between(0, 6 * 3600),
            _ => inserted + rng.between(3600, 30 * DAY),
        };
        if confirmed && departure_secs < latest && rng.chance(0.5) {
            updated = updated.max(departure_secs + rng.between(3600, 2 * DAY));
        }
        let updated = updated.min(latest).max(inserted);
        let activity = if rng.chance(0.3) {
            (updated + rng.between(600, 10 * DAY)).min(latest)
        } else {
            updated
        };

        let code_alphabet = b"ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";
        let confirmation = match channel.id {
            2018 | 2001 => Some(format!("HM{}", rng.code(code_alphabet, 8))),
            2005 => Some(rng.code(b"0123456789", 10)),
            2002 | 2010 => Some(format!("HA-{}", rng.code(b"0123456789", 7))),
            2007 => Some(rng.code(b"0123456789", 9)),
            _ => None,
        };
        let channel_ref = confirmation
            .clone()
            .unwrap_or_else(|| rng.code(b"0123456789abcdef", 12));
        let reservation_id = format!(
            "{}-{}-{}-{}",
            config.client_id, listing.id, channel.id, channel_ref
        );
        let modified = status == "modified" && rng.chance(0.6);

        let record = ReservationRecord {
            id,
            listing_map_id: listing.id,
            channel_id: channel.id,
            source: channel.source,
            channel_name: channel.name,
            channel_reservation_id: reservation_id.clone(),
            reservation_id,
            hostaway_reservation_id: id,
            external_property_id: None,
            assignee_user_id: if rng.chance(0.4) {
                Some(rng.between(1, 6))
            } else {
                None
            },
            is_processed: 1,
            is_instant_booked: i64::from(airbnb && rng.chance(0.5)),
            reservation_date: format_timestamp(stay.booked),
            pending_expire_date: (status == "pending").then(|| format_timestamp(stay.booked + DAY)),
            guest_name: if owner {
                format!("Owner stay ({last})")
            } else {
                format!("{first} {last}")
            },
            guest_first_name: first.to_owned(),
            guest_last_name: last.to_owned(),
            guest_external_account_id: airbnb.then(|| rng.code(b"0123456789", 9)),
            guest_city: Some(origin.2),
            guest_country: Some(origin.0),
            guest_email: Some(format!(
                "{}.{}{}@example.com",
                ascii_lower(first),
                ascii_lower(last),
                k % 100
            )),
            guest_recommendations: rng.between(0, 12),
            guest_trips: rng.between(0, 30),
            number_of_guests: guests,
            adults: guests - children,
            children: (children > 0).then_some(children),
            arrival_date: format_date(arrival),
            departure_date: format_date(departure),
            is_dates_unspecified: 0,
            previous_arrival_date: modified
                .then(|| format_date(arrival - TimeDelta::days(rng.between(1, 3)))),
            previous_departure_date: modified
                .then(|| format_date(departure - TimeDelta::days(rng.between(0, 2)))),
            check_in_time: 15,
            check_out_time: 11,
            nights: stay.nights,
            phone: Some(format!(
                "+{} {}",
                rng.between(1, 99),
                rng.code(b"0123456789", 9)
            )),
            total_price: total,
            tax_amount: tax,
            channel_commission_amount: commission,
            hostaway_commission_amount: hostaway_commission,
            cleaning_fee: Some(cleaning),
            security_deposit_fee: if owner { None } else { Some(listing.deposit) },
            is_paid: if owner {
                None
            } else if confirmed {
                Some(i64::from(arrival_secs < latest || rng.chance(0.6)))
            } else {
                Some(0)
            },
            payment_method: match channel.id {
                2000 | 2013 if !owner => Some("credit_card"),
                _ => None,
            },
            currency: listing.currency.clone(),
            status,
            cancellation_date: (status == "cancelled").then(|| format_timestamp(updated)),
            cancelled_by: (status == "cancelled")
                .then(|| if rng.chance(0.7) { "guest" } else { "host" }),
            host_note: if rng.chance(0.1) {
                Some("Airport pickup arranged with the driver.")
            } else {
                None
            },
            guest_note: if rng.chance(0.15) {
                Some("We arrive on a late flight, around 23:00.")
            } else {
                None
            },
            guest_locale: Some(origin.1),
            door_code: confirmed.then(|| rng.code(b"0123456789", 4)),
            comment: None,
            confirmation_code: confirmation,
            airbnb_expected_payout_amount: airbnb
                .then(|| round(total - commission.unwrap_or(0.0), d)),
            airbnb_listing_base_price: airbnb.then(|| round(total - cleaning, d)),
            airbnb_listing_host_fee: if airbnb { commission } else { None },
            airbnb_cancellation_policy: airbnb
                .then(|| rng.pick(&["flexible", "moderate", "strict"])),
            is_starred: i64::from(rng.chance(0.03)),
            is_archived: 0,
            is_pinned: 0,
            reservation_agreement: rng.pick(&["not_required", "signed", "not_signed"]),
            cancellation_policy: rng.pick(&["flexible", "moderate", "strict"]),
            inserted_on: format_timestamp(inserted),
            updated_on: format_timestamp(updated),
            latest_activity_on: format_timestamp(activity),
            custom_field_values: Vec::new(),
            reservation_fees: Vec::new(),
        };
        let meta = Meta {
            updated,
            id,
            activity,
            listing: listing.id,
            channel: channel.id,
            arrival: arrival.num_days_from_ce(),
        };
        if let Some(item) = emit(&record, meta) {
            out.push(item);
        }
        id += 1 + rng.between(0, 2);
    }
    out
}

fn ascii_lower(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A new direct booking of `listing` from `arrival` to `departure`, made at `now` (unix seconds),
/// with every field a seeded reservation has, priced the way the seed prices one. It has no `id`
/// nor `hostawayReservationId`: the store gives it the next free one. `reference` is the booking's
/// code in `reservationId`. None when `listing` has no integer `id`.
pub(crate) fn new_reservation(
    client_id: &str,
    listing: &Value,
    arrival: NaiveDate,
    departure: NaiveDate,
    now: i64,
    reference: &str,
) -> Option<Value> {
    let listing = ListingFacts::of(listing)?;
    let channel = CHANNELS[DIRECT];
    let nights = (departure - arrival).num_days().max(0);
    let d = listing.decimals;
    let total = round(listing.nightly * nights as f64 + listing.cleaning_fee, d);
    let reservation_id = format!("{client_id}-{}-{}-{reference}", listing.id, channel.id);
    let guests = listing.capacity.min(2);
    let record = ReservationRecord {
        id: 0,
        listing_map_id: listing.id,
        channel_id: channel.id,
        source: channel.source,
        channel_name: channel.name,
        channel_reservation_id: reservation_id.clone(),
        reservation_id,
        hostaway_reservation_id: 0,
        external_property_id: None,
        assignee_user_id: None,
        is_processed: 1,
        is_instant_booked: 0,
        reservation_date: format_timestamp(now),
        pending_expire_date: None,
        guest_name: "New Guest".into(),
        guest_first_name: "New".into(),
        guest_last_name: "Guest".into(),
        guest_external_account_id: None,
        guest_city: None,
        guest_country: None,
        guest_email: Some("new.guest@example.com".into()),
        guest_recommendations: 0,
        guest_trips: 0,
        number_of_guests: guests,
        adults: guests,
        children: None,
        arrival_date: format_date(arrival),
        departure_date: format_date(departure),
        is_dates_unspecified: 0,
        previous_arrival_date: None,
        previous_departure_date: None,
        check_in_time: 15,
        check_out_time: 11,
        nights,
        phone: None,
        total_price: total,
        tax_amount: Some(round(total * listing.tax / (1.0 + listing.tax), d)),
        channel_commission_amount: None,
        hostaway_commission_amount: Some(None),
        cleaning_fee: Some(listing.cleaning_fee),
        security_deposit_fee: Some(listing.deposit),
        is_paid: Some(0),
        payment_method: Some("credit_card"),
        currency: listing.currency.clone(),
        status: "new",
        cancellation_date: None,
        cancelled_by: None,
        host_note: None,
        guest_note: None,
        guest_locale: Some("en"),
        door_code: None,
        comment: None,
        confirmation_code: None,
        airbnb_expected_payout_amount: None,
        airbnb_listing_base_price: None,
        airbnb_listing_host_fee: None,
        airbnb_cancellation_policy: None,
        is_starred: 0,
        is_archived: 0,
        is_pinned: 0,
        reservation_agreement: "not_required",
        cancellation_policy: "moderate",
        inserted_on: format_timestamp(now),
        updated_on: format_timestamp(now),
        latest_activity_on: format_timestamp(now),
        custom_field_values: Vec::new(),
        reservation_fees: Vec::new(),
    };
    let mut value = serde_json::to_value(&record).ok()?;
    let fields = value.as_object_mut()?;
    fields.remove("id");
    fields.remove("hostawayReservationId");
    Some(value)
}
