CREATE TABLE "board_incidents" (
	"id" serial PRIMARY KEY NOT NULL,
	"board_id" uuid NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"detected_at" timestamp (3) with time zone NOT NULL,
	"reason" text NOT NULL,
	"phase" text DEFAULT 'detected' NOT NULL,
	"phase_at" timestamp (3) with time zone NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"recovered_at" timestamp (3) with time zone,
	"outcome" text
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "power" jsonb;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "power_state" text;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "power_changed_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "link_goodbye" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "unresponsive_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "board_incidents" ADD CONSTRAINT "board_incidents_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "board_incidents_board_idx" ON "board_incidents" USING btree ("board_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "board_incidents_open_idx" ON "board_incidents" USING btree ("board_id") WHERE "board_incidents"."outcome" is null;