// Package kv holds what this project's own stores (store/memory and
// store/postgres) share: key normalization, copies of values and pairs,
// the TTLs they honour, and how they read a lock's options and wake the
// Lock calls blocked on a key.
package kv
