CREATE TABLE "board_calls" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"board_id" uuid NOT NULL,
	"origin_replica" text NOT NULL,
	"method" text NOT NULL,
	"params" jsonb NOT NULL,
	"timeout_ms" integer NOT NULL,
	"claimed_by" text,
	"answered_at" timestamp (3) with time zone,
	"result" jsonb,
	"error" jsonb,
	"request_body" "bytea",
	"response_body" "bytea",
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "board_reboots" (
	"board_id" uuid PRIMARY KEY NOT NULL,
	"replica_id" text NOT NULL,
	"boot_id" text,
	"started_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "board_sessions" (
	"board_id" uuid PRIMARY KEY NOT NULL,
	"replica_id" text NOT NULL,
	"connected_at" timestamp (3) with time zone NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"boot_id" text
);
--> statement-breakpoint
CREATE TABLE "relay_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"board_id" uuid NOT NULL,
	"script_id" text NOT NULL,
	"frame" "bytea" NOT NULL,
	"last_event_id" text,
	"state" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "relay_subscriptions" (
	"board_id" uuid NOT NULL,
	"script_id" text NOT NULL,
	"replica_id" text NOT NULL,
	"port" integer NOT NULL,
	"path" text NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "relay_subscriptions_board_id_script_id_replica_id_pk" PRIMARY KEY("board_id","script_id","replica_id")
);
--> statement-breakpoint
ALTER TABLE "board_calls" ADD CONSTRAINT "board_calls_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "board_reboots" ADD CONSTRAINT "board_reboots_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "board_sessions" ADD CONSTRAINT "board_sessions_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relay_events" ADD CONSTRAINT "relay_events_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "relay_subscriptions" ADD CONSTRAINT "relay_subscriptions_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "board_calls_expires_idx" ON "board_calls" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "board_sessions_replica_idx" ON "board_sessions" USING btree ("replica_id");--> statement-breakpoint
CREATE INDEX "relay_events_stream_idx" ON "relay_events" USING btree ("board_id","script_id","id");--> statement-breakpoint
CREATE INDEX "relay_events_created_idx" ON "relay_events" USING btree ("created_at");