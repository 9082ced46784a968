-- The management villa list at 100,000 villas: the text a search matches is stored (no
-- lower(concatenation) per row scanned), with a trigram index for rare terms, and a covering
-- index in list order, so that a common term's first page is read from the index alone
-- (an index-only scan that stops after `limit` matches) instead of from the table.
ALTER TABLE villas ADD COLUMN search_text text GENERATED ALWAYS AS (
    lower(villa_name || ' ' || villa_code || ' ' || coalesce(city, '') || ' ' || coalesce(country, ''))
) STORED;
CREATE INDEX villas_search_text_trgm ON villas USING gin (search_text gin_trgm_ops);
DROP INDEX villas_search_trgm;
CREATE INDEX villas_list_covering ON villas (created_at DESC, id DESC)
    INCLUDE (search_text, villa_name, villa_code, status, is_active, property_type, bedrooms, city, country);
