CREATE TABLE "board_telemetry" (
	"board_id" uuid NOT NULL,
	"minute" timestamp (3) with time zone NOT NULL,
	"sample" jsonb NOT NULL,
	CONSTRAINT "board_telemetry_board_id_minute_pk" PRIMARY KEY("board_id","minute")
);
--> statement-breakpoint
ALTER TABLE "boards" ADD COLUMN "telemetry" jsonb;--> statement-breakpoint
ALTER TABLE "board_telemetry" ADD CONSTRAINT "board_telemetry_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "board_telemetry_minute_idx" ON "board_telemetry" USING btree ("minute");