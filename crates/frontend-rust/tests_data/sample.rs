//! A connection handler.
use std::sync::{Arc, Mutex as StdMutex};
use std::thread;
use tokio::sync::mpsc::{self, channel};
use tokio::select;
use crate::db::{self, Pool};
use super::util::*;

static STATE: StdMutex<u32> = StdMutex::new(0);
const MAX: usize = 10_000;

pub struct Conn {
    inner: Arc<StdMutex<Inner>>,
    tx: mpsc::Sender<String>,
    pool: Option<Box<Pool>>,
}

struct Inner(u32, String);

impl Conn {
    pub fn new(pool: Pool) -> Self {
        let (tx, rx) = channel(16);
        Self { inner: Arc::new(StdMutex::new(Inner(0, String::new()))), tx, pool: Some(Box::new(pool)) }
    }

    pub async fn run(&self, mut rx: mpsc::Receiver<String>) -> Result<(), Error> {
        let guard = self.inner.lock().unwrap();
        thread::sleep(std::time::Duration::from_millis(10));
        loop {
            select! {
                biased;
                Some(msg) = rx.recv(), if guard.0 > 0 => { println!("got {}", msg); }
                _ = tokio::time::sleep(Duration::from_secs(1)) => break,
                else => return Ok(()),
            }
        }
        let v = match self.tx.send("x".into()).await {
            Ok(()) => 1,
            Err(e) if e.is_closed() => 2,
            _ => 3,
        };
        tokio::spawn(async move { db::query(&v).await });
        Self::helper(v)?;
        Ok(())
    }

    fn helper(x: i32) -> Result<(), Error> { let _ = x; Ok(()) }
}

fn free(a: u8) -> u8 { a + 1 }

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let c = Conn::new(Pool::default());
    let h = thread::spawn(move || free(1));
    tokio::join!(c.run(rx), other());
    let xs = vec![1, 2, 3];
    if let Some(x) = xs.first() { free(*x); } else if xs.is_empty() { return; }
    for (i, x) in xs.iter().enumerate() { continue; }
    while let Some(_) = None::<u8> {}
    STATE.lock().unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;
    #[tokio::test]
    async fn it_works() { free(2); }
}
