"""Pure functions and versioned data that decide; callable from workflows."""
