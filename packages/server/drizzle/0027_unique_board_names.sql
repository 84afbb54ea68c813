ALTER TABLE "boards" ADD COLUMN "enrolled_from" text;--> statement-breakpoint
-- Board names become unique. Boards that share a name keep it on the oldest one; every later
-- one is renamed `<name>-<first 8 of its id>` (deterministic, and unlike a counter it cannot
-- meet a name a person already gave another board).
UPDATE "boards" b SET "name" = b."name" || '-' || substr(b."id"::text, 1, 8)
FROM (
  SELECT "id", row_number() OVER (PARTITION BY "name" ORDER BY "created_at", "id") AS n FROM "boards"
) d
WHERE d."id" = b."id" AND d.n > 1;--> statement-breakpoint
CREATE UNIQUE INDEX "boards_name_idx" ON "boards" USING btree ("name");
