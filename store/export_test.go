package store

import "context"

// MigrateTo migrates s with the released migrations and one more, version
// SchemaVersion+1, made of sql: as a future llmhistory would.
func MigrateTo(ctx context.Context, s *Store, sqlite, postgres string) error {
	next := migration{version: SchemaVersion + 1, sqlite: []string{sqlite}, postgres: []string{postgres}}
	return s.migrate(ctx, append(append([]migration(nil), migrations...), next))
}
