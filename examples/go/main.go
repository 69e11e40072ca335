// Publish a notification job to Pushworker (github.com/rabbitmq/amqp091-go) and print its events.
// Usage: publish_job [-group NAME] [-alert TEXT] [-app APP] TOKEN [TOKEN...]
// The job goes to the queue push.jobs (env PUSHWORKER_JOB_QUEUE) persistent, mandatory, with
// publisher confirms. Each event about it is printed as "<routing key> <json>" until job.completed
// or job.rejected; exit 1 if none comes within PUSHWORKER_EVENT_TIMEOUT seconds (30).
package main

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

type groups []string

func (g *groups) String() string     { return fmt.Sprint(*g) }
func (g *groups) Set(v string) error { *g = append(*g, v); return nil }

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func uuid4() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		log.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func main() {
	log.SetFlags(0)
	var jobGroups groups
	flag.Var(&jobGroups, "group", "a group to send to (repeatable)")
	alert := flag.String("alert", "Hello from Go", "the alert text")
	app := flag.String("app", "default", "the configured app")
	flag.Parse()
	jobQueue := env("PUSHWORKER_JOB_QUEUE", "push.jobs")
	timeout, err := strconv.ParseFloat(env("PUSHWORKER_EVENT_TIMEOUT", "30"), 64)
	if err != nil {
		log.Fatalf("PUSHWORKER_EVENT_TIMEOUT: %v", err)
	}

	id := uuid4()
	body, _ := json.Marshal(map[string]any{
		"id":      id,
		"app":     *app,
		"tokens":  append([]string{}, flag.Args()...),
		"groups":  append([]string{}, jobGroups...),
		"payload": map[string]any{"aps": map[string]any{"alert": *alert}},
	})

	conn, err := amqp.Dial(env("PUSHWORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}

	// Bound before publishing, or the first events could come before the queue exists. Declared
	// exactly as the worker declares it: other arguments would be refused (406 PRECONDITION_FAILED).
	must(ch.ExchangeDeclare("push.results", "topic", true, false, false, false,
		amqp.Table{"alternate-exchange": "push.results.unrouted"}))
	events, err := ch.QueueDeclare("", false, true, true, false, nil)
	must(err)
	must(ch.QueueBind(events.Name, "#", "push.results", false, nil))
	deliveries, err := ch.Consume(events.Name, "", true, true, false, false, nil)
	must(err)

	must(ch.Confirm(false))
	// Buffered: the library hands a return over before the confirm of the same message.
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 1))
	// The workers declare the job queue (its type and arguments are theirs: a quorum queue refuses
	// any other declaration with 406). A passive declare only checks that it exists, whatever its type.
	if _, err = ch.QueueDeclarePassive(jobQueue, true, false, false, false, nil); err != nil {
		log.Fatalf("no queue %s (%v): start a worker once, it declares the queues", jobQueue, err)
	}
	must(ch.Publish("", jobQueue, true, false, amqp.Publishing{
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		MessageId:    id,
		Body:         body,
	}))
	select {
	case confirm := <-confirms:
		if !confirm.Ack {
			log.Fatalf("job %s was not confirmed: the broker refused it (nack)", id)
		}
	case <-time.After(10 * time.Second):
		log.Fatalf("job %s was not confirmed within 10 s", id)
	}
	select {
	case r := <-returns:
		log.Fatalf("job %s was returned: no queue %s (%d %s)", id, jobQueue, r.ReplyCode, r.ReplyText)
	default:
	}
	fmt.Println("published job", id)

	deadline := time.After(time.Duration(timeout * float64(time.Second)))
	for {
		select {
		case d, ok := <-deliveries:
			if !ok {
				log.Fatal("the broker closed the channel")
			}
			var event struct {
				JobID string `json:"job_id"`
			}
			if json.Unmarshal(d.Body, &event) != nil || event.JobID != id {
				continue
			}
			fmt.Println(d.RoutingKey, string(d.Body))
			if d.RoutingKey == "job.completed" || d.RoutingKey == "job.rejected" {
				return
			}
		case <-deadline:
			log.Fatalf("no job.completed or job.rejected for job %s within %gs", id, timeout)
		}
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
