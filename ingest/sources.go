package ingest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/imprint-dev/imprint"
	"github.com/imprint-dev/imprint/importer"
	"github.com/imprint-dev/imprint/wire"
)

// FormatAuto sniffs the format of each file from its head.
const FormatAuto = "auto"

// Formats are the values an import's format takes: FormatAuto or one of
// the importer's formats.
var Formats = []string{FormatAuto, importer.FormatClaudeCode, importer.FormatOpenClaw, importer.FormatOpenAI,
	importer.FormatChatGPT, importer.FormatLoCoMo, importer.FormatImprint}

// Source is one unit an import reads: a file, or a Claude Code project
// folder (sessions and their sub-agent files together).
type Source struct {
	Path   string
	Format string
	// ClaudeCodeDir is set for a Claude Code project folder.
	ClaudeCodeDir bool
	// Files is the number of files the source reads: 1, or the session
	// files of a Claude Code folder.
	Files int
}

// CollectSources expands paths into the files (and Claude Code folders) to
// read, with each one's format (format is FormatAuto or the one to use).
// Files of unknown format inside folders are skipped with a warning; a
// named file of unknown format, a missing path or no transcript at all is
// an error of kind ErrInvalid.
func CollectSources(paths []string, format string) ([]Source, []importer.Warning, error) {
	var out []Source
	var warns []importer.Warning
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, wire.FileError(p, err)
		}
		if !info.IsDir() {
			f, err := fileFormat(p, format)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, Source{Path: p, Format: f, Files: 1})
			continue
		}
		srcs, ws, err := walkDir(p, format)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, srcs...)
		warns = append(warns, ws...)
	}
	if len(out) == 0 {
		return nil, warns, imprint.Invalidf("no transcripts found in %s", strings.Join(paths, ", "))
	}
	return out, warns, nil
}

// walkDir finds transcripts under dir. A folder holding Claude Code session
// files is one source, read with its sub-agent files.
func walkDir(dir, format string) ([]Source, []importer.Warning, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, wire.FileError(dir, err)
	}
	var out []Source
	var warns []importer.Warning
	ccFiles := 0
	var subdirs []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if e.IsDir() {
			subdirs = append(subdirs, p)
			continue
		}
		if !strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		f, err := fileFormat(p, format)
		if err != nil {
			warns = append(warns, importer.Warning{File: p, Message: "skipped: " + err.Error()})
			continue
		}
		if f == importer.FormatClaudeCode {
			ccFiles++
			continue
		}
		out = append(out, Source{Path: p, Format: f, Files: 1})
	}
	ccDir := ccFiles > 0
	if ccDir {
		out = append(out, Source{Path: dir, Format: importer.FormatClaudeCode, ClaudeCodeDir: true, Files: ccFiles})
	}
	for _, sd := range subdirs {
		// A Claude Code folder's <session>/subagents files belong to it.
		if ccDir {
			continue
		}
		srcs, ws, err := walkDir(sd, format)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, srcs...)
		warns = append(warns, ws...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, warns, nil
}

// fileFormat returns the format of the file at p: the format given, or
// sniffed from its head. Format openai also covers τ-bench trajectories.
func fileFormat(p, format string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", wire.FileError(p, err)
	}
	defer f.Close()
	head := make([]byte, importer.SniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", wire.FileError(p, err)
	}
	sniffed, serr := importer.Sniff(p, bytes.Clone(head[:n]))
	switch {
	case format == FormatAuto:
		return sniffed, serr
	case format == importer.FormatOpenAI && sniffed == importer.FormatTauBench:
		return importer.FormatTauBench, nil
	}
	return format, nil
}

// Read reads the source into transcripts; loc is the time zone of
// zone-less dates (LoCoMo). Unreadable or invalid input is ErrInvalid.
func (src Source) Read(loc *time.Location) ([]importer.Transcript, []importer.Warning, error) {
	if src.ClaudeCodeDir {
		return importer.ReadClaudeCodeDir(src.Path)
	}
	f, err := os.Open(src.Path)
	if err != nil {
		return nil, nil, imprint.Invalidf("%s: %v", src.Path, err)
	}
	defer f.Close()
	var trs []importer.Transcript
	switch src.Format {
	case importer.FormatClaudeCode:
		var tr importer.Transcript
		tr, err = importer.ReadClaudeCode(f, src.Path)
		trs = []importer.Transcript{tr}
	case importer.FormatOpenClaw:
		var tr importer.Transcript
		tr, err = importer.ReadOpenClaw(f, src.Path)
		trs = []importer.Transcript{tr}
	case importer.FormatOpenAI:
		trs, err = importer.ReadOpenAIChat(f, src.Path)
	case importer.FormatTauBench:
		trs, err = importer.ReadTauBench(f, src.Path)
	case importer.FormatChatGPT:
		trs, err = importer.ReadChatGPT(f, src.Path)
	case importer.FormatLoCoMo:
		trs, err = importer.ReadLoCoMo(f, src.Path, loc)
	case importer.FormatImprint:
		trs, err = importer.ReadImprint(f, src.Path)
	default:
		return nil, nil, imprint.Invalidf("%s: unknown format %q", src.Path, src.Format)
	}
	if err != nil {
		return nil, nil, err
	}
	return trs, nil, nil
}
