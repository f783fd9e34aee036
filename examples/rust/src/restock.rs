//! Restock orders arriving on a RabbitMQ queue (lapin).

use futures_lite::StreamExt;
use lapin::options::{BasicAckOptions, BasicNackOptions};
use lapin::Consumer;

async fn restock(order: &[u8]) -> Result<(), std::io::Error> {
    tokio::fs::write("/var/lib/inventory/last-order", order).await
}

pub async fn consume(mut consumer: Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        // BUG: acknowledged before the restock is written: a crash in between loses it.
        delivery.ack(BasicAckOptions::default()).await.expect("ack");
        let _ = restock(&delivery.data).await;
    }
}

/// Correct: restock first, acknowledge after; a failure goes back to the queue.
pub async fn consume_safely(mut consumer: Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        match restock(&delivery.data).await {
            Ok(()) => delivery.ack(BasicAckOptions::default()).await.expect("ack"),
            Err(_) => delivery
                .nack(BasicNackOptions { requeue: true, ..Default::default() })
                .await
                .expect("nack"),
        }
    }
}
