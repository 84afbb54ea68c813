CREATE TABLE "camera_frames" (
	"board_id" uuid NOT NULL,
	"script_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"frame" "bytea",
	"captured_at" bigint,
	"error_status" integer,
	"error_code" text,
	"error_detail" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "camera_frames_board_id_script_id_pk" PRIMARY KEY("board_id","script_id")
);
--> statement-breakpoint
ALTER TABLE "camera_frames" ADD CONSTRAINT "camera_frames_board_id_boards_id_fk" FOREIGN KEY ("board_id") REFERENCES "public"."boards"("id") ON DELETE cascade ON UPDATE no action;