-- A wallet's free-text description (Flexprice's SDK sends one on create and update).
ALTER TABLE wallets ADD COLUMN IF NOT EXISTS description text;
