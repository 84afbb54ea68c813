CREATE TABLE "board_scripts" (
	"board_id" uuid NOT NULL,
	"script_id" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"port" integer NOT NULL,
	"state" text NOT NULL,
	"since" timestamp (3) with time zone NOT NULL,
	"restarts" integer DEFAULT 0 NOT NULL,
	"reported_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "board_scripts_board_id_script_id_pk" PRIMARY KEY("board_id","script_id")
);
--> statement-breakpoint
CREATE TABLE "device_script_programs" (
	"script_id" uuid NOT NULL,
	"version" text NOT NULL,
	"sha256" text NOT NULL,
	"size" bigint NOT NULL,
	"filename" text NOT NULL,
	"uploaded_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "device_script_programs_script_id_version_pk" PRIMARY KEY("script_id","version")
);
--> statement-breakpoint
ALTER TABLE "board_scripts" ADD CONSTRAINT "board_scripts_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_script_programs" ADD CONSTRAINT "device_script_programs_script_id_device_scripts_id_fk" FOREIGN KEY ("script_id") REFERENCES "public"."device_scripts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_script_programs" ADD CONSTRAINT "device_script_programs_sha256_contents_sha256_fk" FOREIGN KEY ("sha256") REFERENCES "public"."contents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_script_programs_sha256_idx" ON "device_script_programs" USING btree ("sha256");