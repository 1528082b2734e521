package extract

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	imprint "github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/promptguard"
)

// CodeUnsafeInstruction is the warning code of an instruction that was not
// kept because it asks the assistant to reveal secrets, run downloaded
// code, deceive the user or hide things from them.
const CodeUnsafeInstruction = "unsafe_instruction"

// dropUnsafe removes the instruction candidates that ask for harm
// (promptguard.InstructionHarm), whichever extractor made them: their
// messages stay recorded, as messages, and never become a standing
// instruction that recall would inject into every prompt. Each one dropped
// is a warning and an Info log line naming ids, never the text.
func (r *Runner) dropUnsafe(ctx context.Context, scope imprint.Scope, sessionID string, cands []imprint.Candidate, res *Result) []imprint.Candidate {
	kept := cands[:0:0]
	for _, c := range cands {
		harm := unsafeInstruction(c.Type, c.Content)
		if harm == promptguard.HarmNone {
			kept = append(kept, c)
			continue
		}
		r.noteUnsafe(ctx, scope, sessionID, c.SourceMessageIDs, harm, res)
	}
	return kept
}

// unsafeInstruction is the harm an instruction of content asks for, or
// HarmNone; memories of other types are not instructions.
func unsafeInstruction(t imprint.MemoryType, content string) promptguard.Harm {
	if t != imprint.MemoryInstruction {
		return promptguard.HarmNone
	}
	return promptguard.InstructionHarm(content)
}

// noteUnsafe records that an instruction from the source messages was not
// kept, for the harm it asks.
func (r *Runner) noteUnsafe(ctx context.Context, scope imprint.Scope, sessionID string, sources []string, harm promptguard.Harm, res *Result) {
	ids := clampRunes(strings.Join(sources, ", "), 200)
	res.warn("parse", CodeUnsafeInstruction, fmt.Sprintf("instruction from messages [%s] not kept: it asks to %s", ids, harmText(harm)))
	r.log().LogAttrs(ctx, slog.LevelInfo, "unsafe instruction not kept",
		slog.String("scope", scope.String()),
		slog.String("session_id", sessionID),
		slog.Any("source_message_ids", sources),
		slog.String("harm", string(harm)))
}

func harmText(h promptguard.Harm) string {
	switch h {
	case promptguard.HarmRevealSecrets:
		return "reveal secrets or files"
	case promptguard.HarmRunDownloaded:
		return "run downloaded code"
	case promptguard.HarmDeceive:
		return "deceive the user"
	case promptguard.HarmHide:
		return "hide things from the user"
	}
	return string(h)
}
