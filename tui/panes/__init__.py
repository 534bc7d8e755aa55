"""One pane per thing a person looks after: home, memories, startup setup, conflicts,
updates and held-back writes, agents."""
