package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// updateScreenshots writes the viewer test's screenshots into the repo's
// docs/screenshots (the README shows two); without it they go to a
// temporary folder.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the viewer's screenshots to docs/screenshots")

// viewerToken is the admin token the browser test signs in with.
const viewerToken = "viewer-test-admin-token"

// apiCall sends a JSON request to the server with the admin token and
// decodes the reply into out (when not nil).
func apiCall(t *testing.T, method, url string, body any, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+viewerToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

type viewerMemory struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Type    string `json:"type"`
}

// TestViewerInBrowser drives the web viewer of imprint serve in a real
// headless Chromium: it signs in with the admin token, loads every page,
// searches, opens a memory's history, edits a memory and forgets it (and
// sees it gone), and watches an episode's badge turn to "captured" when
// the episode is finalized through the API, without a reload. It saves a
// screenshot of each page.
func TestViewerInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	dir := t.TempDir()
	s := startInProc(t, dir, map[string]string{"IMPRINT_SERVER_API_TOKEN": viewerToken})
	shots := t.TempDir()
	if *updateScreenshots {
		shots = filepath.Join("..", "..", "docs", "screenshots")
	}

	// What a day of use leaves: a conversation extracted into memories
	// and a captured episode with a tool call.
	apiCall(t, "POST", s.URL+"/v1/messages", map[string]any{"session_id": "trip-planning", "messages": []map[string]string{
		{"role": "user", "content": "I prefer window seats on long flights."},
		{"role": "assistant", "content": "Noted, window seats it is."},
		{"role": "user", "content": "From now on, always answer in English."},
		{"role": "user", "content": "I booked a flight to Lisbon for 20 May 2026."},
		{"role": "assistant", "content": "Great, enjoy Lisbon."},
	}}, nil)
	apiCall(t, "POST", s.URL+"/v1/sessions/trip-planning/extract", nil, nil)
	apiCall(t, "POST", s.URL+"/v1/episodes", map[string]any{"session_id": "trip-planning", "turns": []map[string]any{
		{"role": "user", "content": "Change my Lisbon flight to May 21"},
		{"role": "assistant", "content": "Let me look up the reservation first."},
		{"role": "tool", "content": `{"status":"confirmed","flight":"TP1351"}`, "meta": map[string]any{"name": "get_reservation_details", "input": map[string]string{"reservation_id": "ABC123"}}},
		{"role": "assistant", "content": "Your flight is now on May 21.", "meta": map[string]any{"reflection": "Check the reservation before changing it."}},
	}}, nil)
	var mems struct {
		Memories []viewerMemory `json:"memories"`
	}
	waitFor(t, "the extraction's memories", func() bool {
		apiCall(t, "GET", s.URL+"/v1/memories", nil, &mems)
		return len(mems.Memories) >= 2
	})
	var seat viewerMemory
	for _, m := range mems.Memories {
		if strings.Contains(m.Content, "window seat") {
			seat = m
		}
	}
	if seat.ID == "" {
		t.Fatalf("no memory about window seats among %+v", mems.Memories)
	}
	s.drain(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// The first run starts the browser; it lives as long as bctx.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	// Each step is bounded, so a page that never shows what is awaited
	// fails the test with the page's HTML instead of hanging it.
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			dom, _ := chromedp.Run(bctx, chromedp.OuterHTML(chromedp.CSS("html")))
			t.Fatalf("%s: %v\npage:\n%s", what, err, dom)
		}
	}
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}

	// Sign in: the key is asked once, then every page opens.
	run("sign in", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), viewerToken), chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(".counts")), shot("overview"))
	if got := text(".counts"); !strings.Contains(got, "5\nmessages") && !strings.Contains(got, "5 messages") {
		t.Errorf("overview counts %q, want 5 messages", got)
	}
	for _, p := range []struct{ path, sel, want, name string }{
		{"/memories", "table.memories", "window seats", "memories"},
		{"/episodes", ".cards", "captured", "episodes"},
		{"/sessions", "main table", "trip-planning", "sessions"},
		{"/sessions/trip-planning", "ol.timeline", "Lisbon", "session"},
		{"/live", "#feed", "", "live"},
	} {
		run("open "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.sel)), shot(p.name))
		if got := text("main"); !strings.Contains(got, p.want) {
			t.Errorf("%s shows %q, want %q in it", p.path, got, p.want)
		}
	}
	// The episodes page links each card to its steps.
	run("episodes", chromedp.Navigate(s.URL+"/episodes"), chromedp.WaitVisible(chromedp.CSS(".episode a")))
	href, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector(".episode a").href`))
	if err != nil || !strings.HasPrefix(href, s.URL+"/episodes/") {
		t.Fatalf("the episode card links to %q (%v)", href, err)
	}
	run("open the episode", chromedp.Navigate(href))
	run("wait for the steps", chromedp.WaitVisible(chromedp.CSS("ol.steps")))
	run("shoot the episode", shot("episode"))
	if got := text("ol.steps"); !strings.Contains(got, "get_reservation_details") || !strings.Contains(got, "Check the reservation before changing it.") || !strings.Contains(got, "α") {
		t.Errorf("the episode's steps %q lack the tool call, the reflection or α", got)
	}

	// Search: hits with provenance and the recall block with its tokens.
	run("search", chromedp.Navigate(s.URL+"/search"), chromedp.SendKeys(chromedp.CSS("#search-q"), "window seats"),
		chromedp.Click(chromedp.CSS("#search-go")), chromedp.WaitVisible(chromedp.CSS("#recall")), shot("search"))
	if got := text("#hits"); !strings.Contains(got, "window seat") {
		t.Errorf("search hits %q lack the window seats memory", got)
	}
	if got := text("#recall-tokens"); !strings.Contains(got, "tokens of 800") || strings.HasPrefix(got, "0 ") {
		t.Errorf("recall token count %q", got)
	}
	if got := text("#recall"); !strings.Contains(got, "<imprint-recall>") {
		t.Errorf("recall block %q", got)
	}

	// Edit: a new version, the old text in its history.
	edited := "User prefers aisle seats on short flights."
	run("edit", chromedp.Navigate(s.URL+"/memories/"+seat.ID), chromedp.WaitVisible(chromedp.CSS("#edit-content")),
		chromedp.SetValue(chromedp.CSS("#edit-content"), edited), chromedp.Click(chromedp.CSS("#edit-save")),
		chromedp.WaitVisible(chromedp.CSS(".notice")), shot("memory"))
	if got := text("#memory-content"); got != edited {
		t.Errorf("the edited memory reads %q, want %q", got, edited)
	}
	if got := text("#history"); !strings.Contains(got, seat.Content) {
		t.Errorf("the history %q lacks the old text %q", got, seat.Content)
	}
	// Forget, confirmed: gone from the list.
	run("forget", chromedp.Click(chromedp.CSS("#forget")), chromedp.WaitVisible(chromedp.CSS("#forget-form")),
		chromedp.Click(chromedp.CSS("#forget-confirm")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if got := text("main"); strings.Contains(got, edited) || !strings.Contains(got, "Forgotten") {
		t.Errorf("after forgetting, the memories page reads %q", got)
	}

	// Live: an episode opened through the API shows on the live page; finalizing it turns its badge to
	// captured without a reload.
	var opened struct {
		EpisodeID string `json:"episode_id"`
	}
	apiCall(t, "POST", s.URL+"/v1/sessions/live-demo/turns", map[string]any{"turns": []map[string]string{
		{"role": "user", "content": "Find me a hotel in Lisbon"}, {"role": "assistant", "content": "Searching hotels near Alfama."},
	}}, &opened)
	card := fmt.Sprintf(`[data-episode=%q] `, opened.EpisodeID)
	run("live page", chromedp.Navigate(s.URL+"/live"), chromedp.WaitVisible(chromedp.CSS(card+".badge.open")),
		chromedp.WaitReady(chromedp.CSS(`body[data-live="connected"]`)), chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	apiCall(t, "POST", s.URL+"/v1/sessions/live-demo/finalize", map[string]any{}, nil)
	run("badge captured", chromedp.WaitVisible(chromedp.CSS(card+".badge.captured")), shot("live"))
	if same, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !same {
		t.Errorf("the live page was reloaded to show the badge")
	}
	if got := text(card + "[data-status]"); !strings.HasPrefix(got, "finalized") {
		t.Errorf("the live card's status reads %q, want finalized", got)
	}
	if got := text("#feed"); !strings.Contains(got, "capture.done") || !strings.Contains(got, "episode.finalized") {
		t.Errorf("the live feed %q lacks episode.finalized and capture.done", got)
	}
}
