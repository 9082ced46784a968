-- Two uploads of one file name into one folder must not overwrite each other in the document
-- store: a storage path belongs to one record. The upload gives the second one a suffixed name.
CREATE UNIQUE INDEX documents_storage_path ON documents (storage_path);
CREATE UNIQUE INDEX photos_storage_path ON photos (storage_path);
