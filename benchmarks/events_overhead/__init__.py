"""What the event stream costs per `chat.completions.create`, with and without subscribers.

    python -m benchmarks.events_overhead [--size 1000] [--turns 40] [--repeats 9]
"""
