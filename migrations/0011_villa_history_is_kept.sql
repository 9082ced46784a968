-- A villa with operational history is never deleted through a cascade (ARCHITECTURE.md, "One
-- data model": records with history are kept; archive the villa instead). The API refuses such a
-- delete with 409 VILLA_IN_USE, counting what holds the villa; these rules make the database
-- refuse it too, so a work order or stock item written while the delete runs is never removed
-- with it. What is only the villa's own (documents, photos, staff assignments, inventory
-- locations without items, ...) still goes with it.
ALTER TABLE work_orders DROP CONSTRAINT work_orders_villa_id_fkey,
    ADD CONSTRAINT work_orders_villa_id_fkey FOREIGN KEY (villa_id) REFERENCES villas (id);
ALTER TABLE assets DROP CONSTRAINT assets_villa_id_fkey,
    ADD CONSTRAINT assets_villa_id_fkey FOREIGN KEY (villa_id) REFERENCES villas (id);
ALTER TABLE emergencies DROP CONSTRAINT emergencies_villa_id_fkey,
    ADD CONSTRAINT emergencies_villa_id_fkey FOREIGN KEY (villa_id) REFERENCES villas (id);
ALTER TABLE field_notes DROP CONSTRAINT field_notes_villa_id_fkey,
    ADD CONSTRAINT field_notes_villa_id_fkey FOREIGN KEY (villa_id) REFERENCES villas (id);
ALTER TABLE timesheets DROP CONSTRAINT timesheets_villa_id_fkey,
    ADD CONSTRAINT timesheets_villa_id_fkey FOREIGN KEY (villa_id) REFERENCES villas (id);
ALTER TABLE inventory_items DROP CONSTRAINT inventory_items_property_id_fkey,
    ADD CONSTRAINT inventory_items_property_id_fkey FOREIGN KEY (property_id) REFERENCES villas (id);

-- A staff member's login at the identity provider (the token's `sub`), so that hours logged from
-- that person's own token and hours logged naming the staff member share one day's budget.
ALTER TABLE staff ADD COLUMN identity_subject text UNIQUE;
