"""The daemon as a client of an upstream MemoryCloud (the service, or a daemon in the cloud
role): registration, push, pull, platform updates and sync interrupts. See service.py."""
