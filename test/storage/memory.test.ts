import { MemoryStore } from '../../lib/storage/memory.js';
import { describeConformance } from './conformance.js';

describeConformance('memory', () => new MemoryStore());
