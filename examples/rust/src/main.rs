//! An inventory service: HTTP-facing handlers, shared stock levels and
//! background jobs.

mod restock;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

struct Inventory {
    stock: Arc<Mutex<HashMap<String, u32>>>,
}

impl Inventory {
    async fn restock(&self, sku: &str) {
        // BUG: the std guard is alive across the await below.
        let mut stock = self.stock.lock().unwrap();
        let extra = fetch_supplier(sku).await;
        *stock.entry(sku.to_string()).or_insert(0) += extra;
    }

    async fn restock_fixed(&self, sku: &str) {
        let extra = fetch_supplier(sku).await;
        let mut stock = self.stock.lock().unwrap();
        *stock.entry(sku.to_string()).or_insert(0) += extra;
    }

    async fn snapshot(&self) -> std::io::Result<()> {
        let text = {
            let stock = self.stock.lock().unwrap();
            format!("{:?}", *stock)
        };
        // BUG: blocking file I/O on a runtime worker.
        std::fs::write("/var/lib/inventory/snapshot", text)
    }
}

async fn fetch_supplier(_sku: &str) -> u32 {
    tokio::time::sleep(Duration::from_millis(20)).await;
    5
}

async fn notify_all(skus: Vec<String>) {
    for sku in skus {
        // BUG: detached task: a panic in it is lost.
        tokio::spawn(async move { fetch_supplier(&sku).await });
    }
}

async fn notify_all_fixed(skus: Vec<String>) {
    let mut set = JoinSet::new();
    for sku in skus {
        set.spawn(async move { fetch_supplier(&sku).await });
    }
    while let Some(res) = set.join_next().await {
        res.expect("notify task panicked");
    }
}

#[tokio::main]
async fn main() {
    // BUG: unbounded: a slow consumer turns this into a memory leak.
    let (audit_tx, mut audit_rx) = mpsc::unbounded_channel::<String>();
    let (events_tx, mut events_rx) = mpsc::channel::<String>(256);
    let consumer = tokio::spawn(async move {
        while let Some(line) = audit_rx.recv().await {
            println!("{line}");
        }
        while let Some(ev) = events_rx.recv().await {
            println!("{ev}");
        }
    });
    let inv = Inventory { stock: Arc::new(Mutex::new(HashMap::new())) };
    inv.restock("apple").await;
    inv.restock_fixed("pear").await;
    inv.snapshot().await.unwrap();
    notify_all(vec!["apple".into()]).await;
    notify_all_fixed(vec!["pear".into()]).await;
    audit_tx.send("done".into()).unwrap();
    events_tx.send("done".into()).await.unwrap();
    drop((audit_tx, events_tx));
    consumer.await.unwrap();
}
