// Package docsnippets holds the test that compiles the Go code blocks of
// README.md and docs/*.md: a snippet that no longer compiles fails the
// build instead of misleading a reader. It has no code of its own.
package docsnippets
