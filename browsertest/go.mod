module github.com/ordergen/ordergen/browsertest

go 1.26.0

replace github.com/ordergen/ordergen => ../

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/ordergen/ordergen v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)
