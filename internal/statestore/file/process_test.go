package file_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/deployer-dev/deployer/internal/statestore"
	"github.com/deployer-dev/deployer/internal/statestore/file"
	"github.com/deployer-dev/deployer/internal/statestore/storetest"
)

// childEnv makes the test binary act as one racing writer (see raceChild).
const childEnv = "DEPLOYER_STATESTORE_FILE_RACE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := raceChild(); err != nil {
			fmt.Fprintln(os.Stderr, "race child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// raceChild loads the state, says "ready", waits for a line on stdin, then
// saves serial+1 on the head given by the parent and prints "won" or
// "conflict".
func raceChild() error {
	dir, stack, racer := os.Getenv("RACE_DIR"), os.Getenv("RACE_STACK"), os.Getenv("RACE_ID")
	serial, err := strconv.ParseInt(os.Getenv("RACE_SERIAL"), 10, 64)
	if err != nil {
		return err
	}
	base := statestore.Head{Version: statestore.Version(os.Getenv("RACE_VERSION")), Serial: serial, Lineage: os.Getenv("RACE_LINEAGE")}
	b, err := file.New(dir)
	if err != nil {
		return err
	}
	s := statestore.New(b)
	st, _, err := s.Load(context.Background(), stack, "production")
	if err != nil {
		return err
	}
	st.Serial = base.Serial + 1
	st.Outputs["racer"] = racer
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	_, err = s.Save(context.Background(), st, base, nil)
	var conflict *statestore.ConflictError
	switch {
	case err == nil:
		fmt.Println("won")
	case errors.As(err, &conflict):
		fmt.Println("conflict")
	default:
		return err
	}
	return nil
}

func TestProcessesRacingSaveOneWins(t *testing.T) {
	const racers = 4
	dir := t.TempDir()
	s := statestore.New(open(t, dir))
	stack := storetest.UniqueStack(t)
	head, err := s.Save(context.Background(), storetest.SeedState(stack, "production"), statestore.Head{}, nil)
	if err != nil {
		t.Fatal(err)
	}

	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	children := make([]child, racers)
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1", "RACE_DIR="+dir, "RACE_STACK="+stack, "RACE_ID="+strconv.Itoa(i),
			"RACE_VERSION="+string(head.Version), "RACE_SERIAL="+strconv.FormatInt(head.Serial, 10), "RACE_LINEAGE="+head.Lineage)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		children[i] = child{cmd, stdin, bufio.NewReader(stdout)}
	}
	line := func(c child) string {
		l, err := c.out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading from racer: %v", err)
		}
		return strings.TrimSpace(l)
	}
	for _, c := range children {
		if l := line(c); l != "ready" {
			t.Fatalf("racer said %q, want ready", l)
		}
	}
	for _, c := range children { // release them together
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	winner := -1
	for i, c := range children {
		switch l := line(c); l {
		case "won":
			if winner >= 0 {
				t.Fatalf("racers %d and %d both saved on the same head", winner, i)
			}
			winner = i
		case "conflict":
		default:
			t.Fatalf("racer %d said %q, want won or conflict", i, l)
		}
	}
	if winner < 0 {
		t.Fatalf("none of %d racing processes saved", racers)
	}
	st, h, err := s.Load(context.Background(), stack, "production")
	if err != nil {
		t.Fatal(err)
	}
	if h.Serial != head.Serial+1 || st.Outputs["racer"] != strconv.Itoa(winner) {
		t.Fatalf("after the race: serial %d written by racer %v, want serial %d by racer %d", h.Serial, st.Outputs["racer"], head.Serial+1, winner)
	}
	snaps, err := s.History(context.Background(), stack, "production", h, 0)
	if err != nil || len(snaps) != 2 {
		t.Fatalf("history %+v (%v): want the first write and the winner's only; losers write no snapshot", snaps, err)
	}
}
