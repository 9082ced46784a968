// The records several specs set up on the platform and its fake PMS: a villa
// linked to one of the fake's listings (each spec its own listing, so runs
// do not see each other's stays), bookings made on the fake (it posts
// Hostaway's webhook; the platform generates the task rules' work orders),
// and the company's today. Clean-up undoes the link and the bookings. And a
// small valid PNG, for photos.
import { deflateSync } from "node:zlib";
import type { APIRequestContext } from "@playwright/test";
import { todayIn } from "../src/dates";
import { apiGet, apiOrigin, apiSend, expect, fakePmsUrl } from "./fixtures";

export { addDays } from "../src/dates";

/** The company's IANA time zone, as the console reads it. */
export async function businessTimeZone(request: APIRequestContext): Promise<string> {
  const config = (await (await request.get(`${apiOrigin()}/console/config.json`)).json()) as { businessTimeZone: string };
  return config.businessTimeZone;
}

/** Today in the company's time zone, as the platform counts days. */
export async function companyToday(request: APIRequestContext): Promise<string> {
  return todayIn(await businessTimeZone(request));
}

export interface VillaOnListing {
  villa: { id: string; name: string };
  /** The platform's id of the fake's listing, now linked to the villa. */
  listingId: string;
}

/** A new villa named `name`, linked to the fake's listing `listingPmsId` (synced by the global setup). */
export async function villaOnListing(
  request: APIRequestContext,
  listingPmsId: number,
  villa: { name: string; bedrooms: number; bathrooms: number; maxGuests: number },
): Promise<VillaOnListing> {
  const made = await apiSend<{ id: string; name: string }>(request, "manager", "POST", "/management/villas", {
    ...villa,
    propertyType: "VILLA",
  });
  const listings = await apiGet<{ data: { id: string; pmsId: number }[] }>(request, "manager", "/reporting/listings?limit=100");
  const listing = listings.data.find((l) => l.pmsId === listingPmsId);
  expect(listing, `the fake's listing ${listingPmsId} (synced by the global setup)`).toBeTruthy();
  await apiSend(request, "manager", "PATCH", `/reporting/listings/${listing!.id}`, { villaId: made.id });
  return { villa: made, listingId: listing!.id };
}

/** Unlinks the listing from its villa, so later runs on it start clean. */
export async function unlinkListing(request: APIRequestContext, listingId: string): Promise<void> {
  await apiSend(request, "manager", "PATCH", `/reporting/listings/${listingId}`, { villaId: null });
}

/** A booking on the fake PMS (posted to the platform as Hostaway's webhook); its PMS id. */
export async function fakeStay(
  request: APIRequestContext,
  stay: { listingMapId: number; arrivalDate: string; departureDate: string; guestName: string; status?: string },
): Promise<number> {
  const response = await request.post(`${fakePmsUrl()}/_fake/reservations`, { data: stay });
  expect(response.ok(), await response.text()).toBeTruthy();
  return ((await response.json()) as { result: { id: number } }).result.id;
}

/** Cancels a booking on the fake PMS: the open work orders of its stay are cancelled with it. */
export async function cancelFakeStay(request: APIRequestContext, id: number): Promise<void> {
  await request.patch(`${fakePmsUrl()}/_fake/reservations/${id}`, { data: { status: "cancelled" } });
}

/** A small valid PNG (a 4×4 turquoise square), made here: the API tells photos by their bytes. */
export function png(): Buffer {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const b of bytes) c = table[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const size = 4;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => [0x1a, 0xb3, 0xa6]).flat())]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
