-- A pool may name the node image its machines should run (a version in WARMMETAL_BOOT_DIR): the pool reboots
-- machines on another image into it, and the iPXE script boots its machines into it. NULL: the default image.
ALTER TABLE pools ADD COLUMN image text;
