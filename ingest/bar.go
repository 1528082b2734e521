package ingest

import "github.com/imprint-dev/imprint/internal/progress"

// Bar is an import's progress.Bar told what Progress is told.
type Bar struct{ *progress.Bar }

// Update implements Progress.
func (b Bar) Update(s *Summary) { b.Bar.Update(s.MessagesRecorded, s.Episodes) }

// Advance implements Progress.
func (b Bar) Advance(s *Summary) { b.Bar.Advance(s.MessagesRecorded, s.Episodes) }
