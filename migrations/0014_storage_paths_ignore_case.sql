-- SharePoint (like the file systems of Windows and macOS) treats names that differ only in
-- letter case as one: `Rules.pdf` and `rules.pdf` in one folder would be one drive item, the
-- second upload replacing the first. A storage path now belongs to one record whatever its
-- case, on every backend, so that a store can move between backends; the uploads take the next
-- candidate name (`rules-<id>.pdf`) on a conflict, as they do for an exact one.
--
-- Rows stored before this, on a case-sensitive backend, whose paths already differ only in
-- case keep their files and paths: all but the oldest of each group are marked and left out of
-- the new index (renaming them would move files under a running store). The exact indexes stay.
ALTER TABLE documents ADD COLUMN legacy_case_twin boolean NOT NULL DEFAULT false;
ALTER TABLE photos ADD COLUMN legacy_case_twin boolean NOT NULL DEFAULT false;
ALTER TABLE field_notes ADD COLUMN legacy_case_twin boolean NOT NULL DEFAULT false;

UPDATE documents d SET legacy_case_twin = true
FROM (SELECT id, row_number() OVER (PARTITION BY lower(storage_path) ORDER BY created_at, id) AS nth
      FROM documents) r
WHERE r.id = d.id AND r.nth > 1;
UPDATE photos p SET legacy_case_twin = true
FROM (SELECT id, row_number() OVER (PARTITION BY lower(storage_path) ORDER BY created_at, id) AS nth
      FROM photos) r
WHERE r.id = p.id AND r.nth > 1;
UPDATE field_notes f SET legacy_case_twin = true
FROM (SELECT id, row_number() OVER (PARTITION BY lower(storage_path) ORDER BY created_at, id) AS nth
      FROM field_notes WHERE storage_path IS NOT NULL) r
WHERE r.id = f.id AND r.nth > 1;

CREATE UNIQUE INDEX documents_storage_path_any_case ON documents (lower(storage_path))
    WHERE NOT legacy_case_twin;
CREATE UNIQUE INDEX photos_storage_path_any_case ON photos (lower(storage_path))
    WHERE NOT legacy_case_twin;
CREATE UNIQUE INDEX field_notes_storage_path_any_case ON field_notes (lower(storage_path))
    WHERE NOT legacy_case_twin;
-- The twins by their folded path too, so "is this path anyone's" is two index probes.
CREATE INDEX documents_storage_path_twins ON documents (lower(storage_path)) WHERE legacy_case_twin;
CREATE INDEX photos_storage_path_twins ON photos (lower(storage_path)) WHERE legacy_case_twin;
CREATE INDEX field_notes_storage_path_twins ON field_notes (lower(storage_path)) WHERE legacy_case_twin;

-- The version the document store gave the stored object: S3's ETag, the drive item's eTag
-- (null on the local backend, and until the object is stored).
ALTER TABLE documents ADD COLUMN storage_etag text;
ALTER TABLE photos ADD COLUMN storage_etag text;
ALTER TABLE field_notes ADD COLUMN storage_etag text;
