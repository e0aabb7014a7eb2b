package browsertest

import (
	"context"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium (or Chrome) to drive:
// $ORDERGEN_CHROMIUM, or the first of chromium, chromium-browser,
// google-chrome and google-chrome-stable on the PATH; "" when there is
// none.
func Chromium() string {
	if p := os.Getenv("ORDERGEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NewBrowser starts the headless Chromium at path with a fresh profile in
// profileDir and a window of width by height pixels, and returns the
// context of its first tab for chromedp.Run, and the function that stops
// the browser. The flags keep it off the network (this machine's is
// closed): no background networking, updates, sync or QUIC.
//
// The browser's temporary files go to a folder of their own, removed when
// it stops: a browser that is stopped (killed) leaves its singleton
// socket's folder behind, and the system's temporary folder filled with
// one per run. (Not in profileDir: a socket's path must be short.)
func NewBrowser(path, profileDir string, width, height int) (context.Context, context.CancelFunc) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profileDir),
		chromedp.WindowSize(width, height),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
	)
	tmp, err := os.MkdirTemp("", "ordergen-browser-")
	if err == nil {
		opts = append(opts, chromedp.Env("TMPDIR="+tmp))
	}
	actx, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, stopTab := chromedp.NewContext(actx)
	return ctx, func() {
		stopTab()
		stopAlloc()
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
}
