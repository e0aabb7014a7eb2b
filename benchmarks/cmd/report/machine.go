package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
)

// cpuModel returns the first "model name" of /proc/cpuinfo, or fallback
// when there is none (another OS, or a CPU that does not say).
func cpuModel(fallback string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return fallback
}

// cores returns the number of logical CPUs.
func cores() int { return goruntime.NumCPU() }

// loadAverage returns the 1, 5 and 15 minute load averages of
// /proc/loadavg, or "" where there is no such file.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], ", ")
}

// goVersion returns the version, GOOS and GOARCH of the go command that
// runs the benchmarks.
func goVersion(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOVERSION", "GOOS", "GOARCH")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return "", fmt.Errorf("go env: unexpected output %q", out)
	}
	return f[0] + " " + f[1] + "/" + f[2], nil
}

// sourceVersion returns the main module's commit as git describes it in
// dir's repository, with "+ uncommitted changes in runtime/" when the
// runtime differs from it, or "" outside a git work tree.
func sourceVersion(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	v := "commit " + strings.TrimSpace(string(out))
	cmd = exec.CommandContext(ctx, "git", "status", "--porcelain", "--", "../runtime")
	cmd.Dir = dir
	if st, err := cmd.Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		v += " + uncommitted changes in runtime/"
	}
	return v
}
