package sqlite

import (
	"context"
	"fmt"

	imprint "github.com/imprint-dev/imprint"
)

var _ imprint.BatchAppender = (*DB)(nil)

// SupportsBatchAppend implements imprint.BatchAppender: always true.
func (db *DB) SupportsBatchAppend() bool { return true }

// AppendMessageBatches records the batches, in order, in one transaction;
// each batch's result is what AppendMessages would have returned had the
// batches been appended one after another. ErrInvalid, before anything is
// written, when a batch has an empty scope, session id or message id (the
// message names the batch, e.g. batches[1]: messages[0].id is required).
func (db *DB) AppendMessageBatches(ctx context.Context, batches []imprint.MessageBatch) ([]imprint.AppendResult, error) {
	for i, b := range batches {
		if err := imprint.CheckAppend(b.Scope, b.SessionID, b.Messages); err != nil {
			return nil, fmt.Errorf("batches[%d]: %w", i, err)
		}
	}
	if len(batches) == 0 {
		return []imprint.AppendResult{}, nil
	}
	res, err := db.appendBatches(ctx, batches)
	if err != nil {
		return nil, dbErr("append message batches", err)
	}
	return res, nil
}
