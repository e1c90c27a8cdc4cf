package main

import (
	"strings"
	"testing"
	"time"
)

// TestEndMissingKey checks that end and delete refuse a key that holds no
// election (a mistyped key), writing nothing, unless --force is given.
func TestEndMissingKey(t *testing.T) {
	storeURL, _ := memoryURL(t)
	for _, cmd := range []string{"end", "delete"} {
		code, out, errOut := runCLI(t, cmd, "--store", storeURL, "--key", "no/such/election")
		if code != exitFailure || out != "" {
			t.Errorf("%s on a missing key: exit %d, stdout %q, want %d and nothing", cmd, code, out, exitFailure)
		}
		if want := `leadership: ` + cmd + `: no election at key "no/such/election"`; strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--force") {
			t.Errorf("%s on a missing key: stderr %q, want one line with %q and --force", cmd, errOut, want)
		}
		// Nothing was written: the key still holds no election.
		if code, out, _ := runCLI(t, "status", "--store", storeURL, "--key", "no/such/election"); code != exitNoLeader || !strings.HasSuffix(strings.TrimSpace(out), " - 0") {
			t.Errorf("status after %s: exit %d %q, want %d and term 0", cmd, code, out, exitNoLeader)
		}
	}

	code, out, errOut := runCLI(t, "end", "--store", storeURL, "--key", "no/such/election", "--force")
	if code != exitOK || errOut != "" || !strings.Contains(out, `ended the election at key "no/such/election" (no election)`) {
		t.Errorf("end --force: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runCLI(t, "status", "--store", storeURL, "--key", "no/such/election"); code != exitEnded {
		t.Errorf("status after end --force: exit %d, want %d", code, exitEnded)
	}
	// Ending an ended election again needs no --force.
	code, out, errOut = runCLI(t, "end", "--store", storeURL, "--key", "no/such/election")
	if code != exitOK || !strings.Contains(out, "(already ended, last term 0)") {
		t.Errorf("end of an ended election: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestEndForeignValue checks that end refuses a key that holds another
// program's value unless --force is given.
func TestEndForeignValue(t *testing.T) {
	storeURL, h := foreignKey(t, "not an election")
	code, _, errOut := runCLI(t, "end", "--store", storeURL, "--key", "k")
	if code != exitFailure || !strings.Contains(errOut, "not an election record") {
		t.Errorf("end of a foreign value: exit %d, stderr %q", code, errOut)
	}
	if pair, err := h.Get(t.Context(), "k", nil); err != nil || string(pair.Value) != "not an election" {
		t.Errorf("the foreign value was changed: %v %v", pair, err)
	}
}

// TestDelete checks that delete ends a running election (its followers
// exit with 4) and then removes the key.
func TestDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out the end notice (3 s and more) in real time")
	}
	storeURL, storeName := memoryURL(t)
	f := startInProcess(t.Context(), t, "follow", "--store", storeURL, "--key", "k")
	startCandidate(t, storeName, "k", "10.0.0.1:80", time.Second)
	if !waitFor(10*time.Second, func() bool { return strings.Contains(f.stdout.String(), " 10.0.0.1:80 1\n") }) {
		t.Fatalf("follow output %q", f.stdout.String())
	}
	began := time.Now()
	code, out, errOut := runCLI(t, "delete", "--store", storeURL, "--key", "k")
	if code != exitOK || errOut != "" || !strings.Contains(out, `deleted the election at key "k" (leader was 10.0.0.1:80, term 1)`) {
		t.Fatalf("delete: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if took := time.Since(began); took < 3*time.Second {
		t.Errorf("delete returned after %v, before every participant could see the end", took)
	}
	if code := f.wait(t, 10*time.Second); code != exitEnded {
		t.Errorf("follow exit %d, want %d", code, exitEnded)
	}
	h := openHandle(t, storeName)
	if _, err := h.Get(t.Context(), "k", nil); err == nil {
		t.Error("the key is still there after delete")
	}
	// delete --force of a key with nothing is not an error.
	if code, _, errOut := runCLI(t, "delete", "--store", storeURL, "--key", "k", "--force"); code != exitOK {
		t.Errorf("delete --force of a missing key: exit %d, stderr %q", code, errOut)
	}
}
