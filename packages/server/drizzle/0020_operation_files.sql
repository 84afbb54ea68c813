CREATE TABLE "operation_files" (
	"operation_id" integer NOT NULL,
	"kind" text NOT NULL,
	"filename" text NOT NULL,
	"size" bigint NOT NULL,
	"sha256" text NOT NULL,
	"content_type" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "operation_files_operation_id_kind_pk" PRIMARY KEY("operation_id","kind")
);
--> statement-breakpoint
ALTER TABLE "operation_files" ADD CONSTRAINT "operation_files_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operation_files" ADD CONSTRAINT "operation_files_sha256_contents_sha256_fk" FOREIGN KEY ("sha256") REFERENCES "public"."contents"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "operation_files_sha256_idx" ON "operation_files" USING btree ("sha256");