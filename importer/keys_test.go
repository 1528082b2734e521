package importer

import (
	"testing"

	imprint "github.com/imprint-dev/imprint"
)

// TestDerivedIDsOfGivenAndLookAlikeIDs: an episode id derived from a
// turn's given id is the one earlier versions derived, and a given id that
// spells out the key of an id-less turn (its time, role and text joined by
// NULs) no longer takes that turn's episode id. (ReadImprint refuses ids
// with control characters at the door.)
func TestDerivedIDsOfGivenAndLookAlikeIDs(t *testing.T) {
	ts, err := imprint.ParseTime("2026-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	plain := BuildEpisodes("s", imprint.Scope{}, []imprint.Turn{{ID: "t1", Role: imprint.RoleUser, TS: ts, Content: "hi"}}, SourceImprint)
	if want := derivedID(SourceImprint, "s", "episode", "t1"); plain[0].ID != want {
		t.Errorf("episode id = %s, want %s as before", plain[0].ID, want)
	}
	forged := BuildEpisodes("s", imprint.Scope{}, []imprint.Turn{{ID: ts.String() + "\x00user\x00hi", Role: imprint.RoleUser, TS: ts, Content: "other"}}, SourceImprint)
	idless := BuildEpisodes("s", imprint.Scope{}, []imprint.Turn{{Role: imprint.RoleUser, TS: ts, Content: "hi"}}, SourceImprint)
	if forged[0].ID == idless[0].ID {
		t.Errorf("a turn whose id spells the key of an id-less turn shares its episode id %s", idless[0].ID)
	}
}
