package ingest

import (
	"context"
	"log"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Consume stores events that arrive on a RabbitMQ queue.
func (s *Service) Consume(ctx context.Context, deliveries <-chan amqp.Delivery) {
	for d := range deliveries {
		// BUG: acknowledged before it is stored: a crash in between loses the event.
		d.Ack(false)
		s.store.Save(ctx, []Event{{ID: d.MessageId, Body: d.Body}})
	}
}

// ConsumeSafely stores first and acknowledges after; a failed save goes
// back to the queue.
func (s *Service) ConsumeSafely(ctx context.Context, deliveries <-chan amqp.Delivery) {
	for d := range deliveries {
		if err := s.store.Save(ctx, []Event{{ID: d.MessageId, Body: d.Body}}); err != nil {
			log.Printf("save %s: %v", d.MessageId, err)
			d.Nack(false, true)
			continue
		}
		d.Ack(false)
	}
}
