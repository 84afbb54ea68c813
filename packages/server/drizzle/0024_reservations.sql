CREATE TABLE "reservations" (
	"id" serial PRIMARY KEY NOT NULL,
	"board_id" uuid,
	"board_selector" jsonb,
	"user_id" uuid,
	"username" text,
	"note" text DEFAULT '' NOT NULL,
	"duration_s" integer NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"requested_at" timestamp (3) with time zone NOT NULL,
	"wait_until" timestamp (3) with time zone NOT NULL,
	"starts_at" timestamp (3) with time zone,
	"ends_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"end_reason" text,
	"ended_by" text
);
--> statement-breakpoint
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reservations_active_board_idx" ON "reservations" USING btree ("board_id") WHERE "reservations"."status" = 'active';--> statement-breakpoint
CREATE INDEX "reservations_status_idx" ON "reservations" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "reservations_board_idx" ON "reservations" USING btree ("board_id","id");