// Package browsertest is for ordergen's developers: it drives the operator's
// web console (runtime/console) in a real headless Chromium, over the
// dispatchers generated for the ledger example (examples/gen), and makes the
// console's screenshot in docs/. It is a module of its own, so that the
// browser driver (chromedp) stays out of the main module's go.mod.
//
// The tests look for Chromium as $ORDERGEN_CHROMIUM, chromium,
// chromium-browser, google-chrome or google-chrome-stable on the PATH, and
// skip with a message when there is none (Debian: apt-get install chromium).
// .ci/run installs it and runs them:
//
//	cd browsertest && go test ./...
//
// The screenshot in docs/ is made by
//
//	cd browsertest && go run ./cmd/screenshot
package browsertest
