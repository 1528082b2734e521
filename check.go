package imprint

// The checks of what a caller asks for (the CLI's flags, the HTTP API's
// query), one per request type, so that imprint and its HTTP API refuse
// and default the same things.

// Check checks a memory listing as a caller gives it and makes a Limit of
// 0 list every memory (NoLimit). ErrInvalid naming the field for an
// unknown Type, a negative Limit or an invalid Workspace.
func (f *MemoryFilter) Check() error {
	if f.Type != "" && !f.Type.Valid() {
		return Invalidf("type %q: want persona, episodic or instruction", f.Type)
	}
	return checkListing(&f.Limit, f.Workspace)
}

// Check checks a trace listing as a caller gives it and makes a Limit of
// 0 list every trace (NoLimit). ErrInvalid naming the field for a negative
// Limit or an invalid Workspace.
func (f *TraceFilter) Check() error { return checkListing(&f.Limit, f.Workspace) }

// checkListing checks a listing's limit and workspace, and makes a limit
// of 0 no limit.
func checkListing(limit *int, workspace string) error {
	if *limit < 0 {
		return Invalidf("limit %d: must not be negative (0 lists all)", *limit)
	}
	if err := ValidateWorkspace("workspace", workspace); err != nil {
		return err
	}
	if *limit == 0 {
		*limit = NoLimit
	}
	return nil
}

// Check checks a search as a caller gives it and clamps its Limit
// (SearchLimit: DefaultSearchLimit for 0, at most MaxSearchLimit).
// ErrInvalid naming the field for a negative Limit or an invalid
// Workspace.
func (q *SearchQuery) Check() error {
	if q.Limit < 0 {
		return Invalidf("limit %d: must not be negative", q.Limit)
	}
	if err := ValidateWorkspace("workspace", q.Workspace); err != nil {
		return err
	}
	q.Limit = SearchLimit(q.Limit)
	return nil
}

// Check checks a recall as a caller gives it. ErrInvalid naming the field
// for a negative BudgetTokens or an invalid Workspace.
func (q RecallQuery) Check() error {
	if q.BudgetTokens < 0 {
		return Invalidf("budget_tokens %d: must not be negative", q.BudgetTokens)
	}
	return ValidateWorkspace("workspace", q.Workspace)
}
