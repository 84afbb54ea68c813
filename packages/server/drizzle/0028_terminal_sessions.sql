CREATE TABLE "terminal_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"board_id" uuid NOT NULL,
	"board_name" text NOT NULL,
	"user_id" uuid,
	"username" text,
	"started_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp (3) with time zone,
	"exit_code" integer,
	"end_reason" text,
	"cols" integer NOT NULL,
	"rows" integer NOT NULL,
	"replica_id" text NOT NULL,
	"recording" "bytea",
	"recording_bytes" integer DEFAULT 0 NOT NULL,
	"recording_truncated" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "terminal_sessions_started_idx" ON "terminal_sessions" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "terminal_sessions_board_idx" ON "terminal_sessions" USING btree ("board_id","started_at");