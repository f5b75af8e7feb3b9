// A producer in Go: enqueue one APNs notification with database/sql and lib/pq, then wait for
// its outcome.
//
//	cd examples/go && go mod tidy     # fetches github.com/lib/pq
//	PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq go run . DEVICE_TOKEN
//
// lib/pq defaults to sslmode=require: add ?sslmode=disable to the URL of a server without TLS.
// Prints the row's id, then its final status; exits 0 only if it was sent. A producer usually
// does not wait: the outcome stays in the row (status, last_status, last_reason).
// The contract: docs/producers.md.
package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"time"

	_ "github.com/lib/pq"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: enqueue DEVICE_TOKEN")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "enqueue:", err)
		os.Exit(1)
	}
}

func run(token string) error {
	db, err := sql.Open("postgres", os.Getenv("PUSHQ_DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()

	payload, _ := json.Marshal(map[string]any{
		"aps": map[string]any{
			"alert": map[string]string{"title": "Order 1042", "body": "Your order has shipped"},
			"sound": "default",
		},
	})
	// One transaction: in an application, the change that caused the notification would be
	// written in it too, so both commit or neither does.
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata)
	                   VALUES ($1, $2, now() + interval '1 hour', $3)
	                   RETURNING id`, token, string(payload), `{"order": 1042, "example": "go"}`).Scan(&id)
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	fmt.Printf("notification %d: enqueued\n", id)

	var status string
	var httpStatus sql.NullInt64
	var reason sql.NullString
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := db.QueryRow(`SELECT status, last_status, last_reason FROM pushq.notifications WHERE id = $1`, id).
			Scan(&status, &httpStatus, &reason)
		if err != nil {
			return err
		}
		if status == "sent" || status == "failed" || status == "expired" || status == "cancelled" || time.Now().After(deadline) {
			break
		}
	}
	fmt.Printf("notification %d: %s (HTTP %d) %s\n", id, status, httpStatus.Int64, reason.String)
	if status != "sent" {
		os.Exit(1)
	}
	return nil
}
