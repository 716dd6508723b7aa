-- Re-enrolling hardware that is already a machine takes over that machine's identity: only tokens minted for it
-- may (for example the short-lived per-boot tokens of network-booted agents).
ALTER TABLE enrollment_tokens ADD COLUMN allow_reenroll boolean NOT NULL DEFAULT false;
