-- The villa management surface (/management) over the same villa domain.

-- An owner created by the onboarding wizard's step 2 belongs to that villa and is deleted with it
-- (unless another villa was linked to it since); owners created on /management/owners stand on
-- their own and survive the deletion of their villas. Every owner that exists before this
-- migration was created by step 2.
ALTER TABLE owners ADD COLUMN created_for_villa uuid;
UPDATE owners o SET created_for_villa = v.id FROM villas v WHERE v.owner_id = o.id;

-- Codes of villas created on /management/villas without one: VL-000001, VL-000002, ...
CREATE SEQUENCE villa_code_seq;

-- Substring search of the owner and staff lists (name, company, email).
CREATE INDEX owners_search_trgm ON owners USING gin (
    (lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company_name, '')
        || ' ' || coalesce(email, ''))) gin_trgm_ops
);
CREATE INDEX staff_search_trgm ON staff USING gin (
    (lower(first_name || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, ''))) gin_trgm_ops
);
CREATE INDEX ota_credentials_created ON ota_credentials (villa_id, created_at);
